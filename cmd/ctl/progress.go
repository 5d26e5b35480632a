package main

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
)

// importProgress is the terminal progress bar of an import. The bar's length is the
// file's size in bytes (compressed bytes for a gzip file), which gives the time left
// without counting the rows first; its text shows the rows read and rows per second.
//
// Once the file is read, the bar gives way to one per stage of the import
// (importer.Options.Stage): a count of the indexes built, a spinner with the time spent
// while rows are written or the tables analysed. A large load spends most of its time
// building indexes, after the last row is read.
type importProgress struct {
	bar    *progressbar.ProgressBar
	w      io.Writer
	reader io.Reader
	start  time.Time
	read   atomic.Int64 // bytes of the file read
	stage  string       // the stage shown, "" while the file is read
}

func newImportProgress(f *os.File, w io.Writer) *importProgress {
	size := int64(-1) // unknown: a spinner
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	p := &importProgress{start: time.Now(), w: w}
	p.bar = p.newBar(size, "reading", progressbar.OptionSetPredictTime(true))
	p.reader = &countingReader{r: f, n: &p.read}
	return p
}

// newBar is a bar of max steps (-1: a spinner) described by desc.
func (p *importProgress) newBar(maxSteps int64, desc string, more ...progressbar.Option) *progressbar.ProgressBar {
	opts := append([]progressbar.Option{
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionShowDescriptionAtLineEnd(),
		progressbar.OptionThrottle(200 * time.Millisecond),
		progressbar.OptionSetWidth(30),
		progressbar.OptionClearOnFinish(),
	}, more...)
	return progressbar.NewOptions64(maxSteps, opts...)
}

// stages is the importer's Options.Stage callback.
func (p *importProgress) stages(stage string, done, total int) {
	if stage != p.stage {
		_ = p.bar.Finish()
		p.stage = stage
		if total > 0 {
			p.bar = p.newBar(int64(total), stage, progressbar.OptionShowCount())
		} else {
			p.bar = p.newBar(-1, stage, progressbar.OptionSetSpinnerChangeInterval(200*time.Millisecond))
		}
		_ = p.bar.RenderBlank()
	}
	if total > 0 {
		_ = p.bar.Set(done)
	}
}

// rows is the importer's progress callback.
func (p *importProgress) rows(read int) {
	rate := float64(read) / max(time.Since(p.start).Seconds(), 1e-3)
	p.bar.Describe(fmt.Sprintf("%d rows, %.0f rows/s", read, rate))
	_ = p.bar.Set64(p.read.Load())
}

func (p *importProgress) finish() { _ = p.bar.Finish() }

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n.Add(int64(n))
	return n, err
}
