package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// settle lets the server and the disk catch up with what earlier phases wrote before a
// phase is timed: a checkpoint writes PostgreSQL's dirty buffers, and sync the kernel's
// dirty pages, so an import, or the floor after it, does not pay for the previous phase's
// write-back (the floor of one 30M-row file: 58.6 s right after the import, 53.6 s after
// a checkpoint and sync, on one machine whose disk alone also gave 38.5 s in another run).
// It is best effort: a role that may not run CHECKPOINT only gets the sync.
func settle(ctx context.Context, dsn string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, _ = conn.Exec(ctx, `CHECKPOINT`)
	syscall.Sync()
	return nil
}

// copyFloor times the floor an import is measured against: the file's rows copied as they
// are (`COPY … FROM STDIN (FORMAT csv)`, decompressed on the way) into a table of text
// columns with no index, key or trigger, in the same database, then dropped. rows, when not
// negative, is the count the copy must find.
func copyFloor(ctx context.Context, dsn, file string, rows int) (phase, error) {
	f, err := os.Open(file)
	if err != nil {
		return phase{}, err
	}
	defer f.Close()
	var r io.Reader = bufio.NewReaderSize(f, 1<<20)
	if strings.HasSuffix(file, ".gz") {
		gz, err := gzip.NewReader(r)
		if err != nil {
			return phase{}, err
		}
		defer gz.Close()
		r = gz
	}
	br := bufio.NewReaderSize(r, 1<<20)
	header, err := csv.NewReader(strings.NewReader(peekLine(br))).Read()
	if err != nil {
		return phase{}, fmt.Errorf("copy floor: header of %s: %w", file, err)
	}
	cols := make([]string, len(header))
	for i := range cols {
		cols[i] = fmt.Sprintf("c%d text", i)
	}
	if err := settle(ctx, dsn); err != nil {
		return phase{}, err
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return phase{}, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `CREATE TABLE copy_floor (`+strings.Join(cols, ", ")+`)`); err != nil {
		return phase{}, err
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), `DROP TABLE copy_floor`) }()
	start := time.Now()
	tag, err := conn.PgConn().CopyFrom(ctx, br, `COPY copy_floor FROM STDIN (FORMAT csv, HEADER true)`)
	if err != nil {
		return phase{}, fmt.Errorf("copy floor: %w", err)
	}
	p := phase{rows: rows, elapsed: time.Since(start)}
	if rows >= 0 && int(tag.RowsAffected()) != rows {
		return p, fmt.Errorf("copy floor: copied %d rows of %s, want %d", tag.RowsAffected(), file, rows)
	}
	fmt.Fprintf(os.Stderr, "raw COPY of %s: %v\n", file, p.elapsed.Round(time.Millisecond))
	return p, nil
}

// peekLine is the reader's first line, left unread.
func peekLine(br *bufio.Reader) string {
	for n := 4096; ; n *= 2 {
		b, err := br.Peek(n)
		if i := strings.IndexByte(string(b), '\n'); i >= 0 {
			return string(b[:i])
		}
		if err != nil {
			return string(b)
		}
	}
}
