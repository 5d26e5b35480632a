package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"golang.org/x/term"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/keywords/importer"
	"github.com/contentapi/contentapi/internal/keywords/sample"
)

// importMemoryLimit is the Go heap an import keeps to unless GOMEMLIMIT says otherwise: a
// soft limit, at which the collector runs more often rather than letting the heap grow to
// twice what the keyword-set build holds (docs/keyword-data-at-scale.md has the figures).
// A live heap above it only costs collector time.
const importMemoryLimit = 176 << 20

// importFile loads a CSV file (plain or gzip) of keyword metrics or rankings and reports
// rows read, loaded, merged and rejected, with the reason for each rejected row listed. On
// a terminal, a progress bar on stderr shows rows, rows/s and the time left.
func importFile(ctx context.Context, pool *pgxpool.Pool, what string, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("import "+what, flag.ContinueOnError)
	country := fs.String("country", "us", "country of rows without a country column")
	language := fs.String("language", "en", "language of rows without a language column")
	source := fs.String("source", "import", "name of the data's source (semrush, gsc, ...)")
	// Flags may come before or after the file name.
	var file string
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		file, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if file == "" && fs.NArg() > 0 {
		file = fs.Arg(0)
	}
	if file == "" {
		return fmt.Errorf("import %s needs a FILE", what)
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	opts := importer.Options{Country: *country, Language: *language, Source: *source}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(importMemoryLimit)
	}
	var in io.Reader = f
	finish := func() {}
	if term.IsTerminal(int(os.Stderr.Fd())) {
		p := newImportProgress(f, os.Stderr)
		in, opts.Progress, opts.Stage, finish = p.reader, p.rows, p.stages, p.finish
	}
	var rep importer.Report
	if what == "keywords" {
		rep, err = importer.ImportKeywords(ctx, pool, in, opts)
	} else {
		rep, err = importer.ImportRankings(ctx, pool, in, opts)
	}
	finish() // the bar is cleared before the report is printed
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s: read %d rows, loaded %d, rejected %d\n", file, rep.Read, rep.Loaded, rep.RejectedRows)
	if rep.Merged > 0 {
		fmt.Fprintf(out, "  %d rows repeated the key of another row of the file and were merged into it\n", rep.Merged)
	}
	if rep.Unchanged > 0 {
		fmt.Fprintf(out, "  %d of the loaded rows were already stored with the same values\n", rep.Unchanged)
	}
	for _, r := range rep.Rejected {
		fmt.Fprintf(out, "  line %d: %s\n", r.Line, r.Reason)
	}
	if more := rep.RejectedRows - len(rep.Rejected); more > 0 {
		fmt.Fprintf(out, "  … and %d more rejected rows\n", more)
	}
	if rep.Loaded == 0 && rep.Read > 0 {
		return errors.New("no row could be loaded")
	}
	return nil
}

func seedSample(ctx context.Context, pool *pgxpool.Pool, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("seed-sample", flag.ContinueOnError)
	ifEmpty := fs.Bool("if-empty", false, "only when the keyword table is empty")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *ifEmpty {
		empty, err := sample.IsEmpty(ctx, pool)
		if err != nil {
			return err
		}
		if !empty {
			fmt.Fprintln(out, "keyword data present; sample not loaded")
			return nil
		}
	}
	kw, rk, err := sample.Seed(ctx, pool)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "loaded the SYNTHETIC sample set: %d keywords, %d rankings for the sample domains %v\n", kw, rk, sample.Domains())
	return nil
}
