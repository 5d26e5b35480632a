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
type importProgress struct {
	bar    *progressbar.ProgressBar
	reader io.Reader
	start  time.Time
	read   atomic.Int64 // bytes of the file read
}

func newImportProgress(f *os.File, w io.Writer) *importProgress {
	size := int64(-1) // unknown: a spinner
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	p := &importProgress{start: time.Now()}
	p.bar = progressbar.NewOptions64(size,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("reading"),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionShowDescriptionAtLineEnd(),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionSetWidth(30),
		progressbar.OptionClearOnFinish(),
	)
	p.reader = &countingReader{r: f, n: &p.read}
	return p
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
