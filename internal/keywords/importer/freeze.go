package importer

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// copyFreeze copies src's rows into table, created in tx, as tx.CopyFrom does, with COPY's
// FREEZE option, which pgx's CopyFrom has no way to ask for: the rows are written frozen and
// their pages marked all-visible. Without it a new table's visibility map is empty until
// VACUUM: the first queries read the heap for every index entry (index-only scans of a
// competitor's rankings became sequential scans, gaps against the big domain took 3 s
// instead of 0.3 s), and the first reads of each row set its hint bits, writing the table
// again. The rows are sent in COPY's binary format, each value encoded by the connection's
// type map for its column's type.
func copyFreeze(ctx context.Context, tx pgx.Tx, table string, columns []string, src pgx.CopyFromSource) (int64, error) {
	var oids []uint32
	if err := tx.QueryRow(ctx, `SELECT array_agg(a.atttypid ORDER BY c.i) FROM unnest($2::text[]) WITH ORDINALITY AS c(name, i)
		JOIN pg_attribute a ON a.attrelid = $1::regclass AND a.attname = c.name`, table, columns).Scan(&oids); err != nil {
		return 0, fmt.Errorf("read column types of %s: %w", table, err)
	}
	if len(oids) != len(columns) {
		return 0, fmt.Errorf("%s lacks some of the columns %v", table, columns)
	}
	quoted := make([]string, len(columns))
	for i, c := range columns {
		quoted[i] = pgx.Identifier{c}.Sanitize()
	}
	pr, pw := io.Pipe()
	encoded := make(chan error, 1)
	go func() {
		err := encodeCopy(pw, tx.Conn().TypeMap(), oids, src)
		_ = pw.CloseWithError(err) // a nil err closes the pipe: the end of the data
		encoded <- err
	}()
	tag, err := tx.Conn().PgConn().CopyFrom(ctx, pr,
		`COPY `+pgx.Identifier{table}.Sanitize()+` (`+strings.Join(quoted, ", ")+`) FROM STDIN (FORMAT binary, FREEZE)`)
	_ = pr.CloseWithError(io.ErrClosedPipe) // the encoder stops if the server stopped first
	if encErr := <-encoded; err == nil && encErr != nil {
		err = encErr
	}
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// copyChunk is how much encoded data is written to the pipe at a time.
const copyChunk = 64 << 10

// encodeCopy writes src's rows to w in COPY's binary format. Each column's encode plan is
// looked up once per Go type of its values, not once per value as pgtype.Map.Encode does
// (that look-up was half of the encoding's CPU).
func encodeCopy(w io.Writer, m *pgtype.Map, oids []uint32, src pgx.CopyFromSource) error {
	plans := make([]map[reflect.Type]pgtype.EncodePlan, len(oids))
	for i := range plans {
		plans[i] = make(map[reflect.Type]pgtype.EncodePlan, 2)
	}
	encode := func(i int, v any, buf []byte) ([]byte, error) {
		if v == nil {
			return nil, nil
		}
		t := reflect.TypeOf(v)
		if t.Kind() == reflect.Pointer && reflect.ValueOf(v).IsNil() {
			return nil, nil
		}
		plan, ok := plans[i][t]
		if !ok {
			if plan = m.PlanEncode(oids[i], pgtype.BinaryFormatCode, v); plan == nil {
				return m.Encode(oids[i], pgtype.BinaryFormatCode, v, buf) // its error says why
			}
			plans[i][t] = plan
		}
		return plan.Encode(v, buf)
	}
	buf := append([]byte("PGCOPY\n\xff\r\n\x00"), 0, 0, 0, 0, 0, 0, 0, 0) // signature, flags, header extension
	if ta, ok := src.(tupleAppender); ok && ta.encodes(oids) {
		for src.Next() {
			if buf = ta.appendTuple(buf); len(buf) >= copyChunk {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
		return endCopy(w, buf, src)
	}
	for src.Next() {
		vals, err := src.Values()
		if err != nil {
			return err
		}
		if len(vals) != len(oids) {
			return fmt.Errorf("a row of %d values for %d columns", len(vals), len(oids))
		}
		buf = binary.BigEndian.AppendUint16(buf, uint16(len(vals)))
		for i, v := range vals {
			at := len(buf)
			buf = binary.BigEndian.AppendUint32(buf, 0xFFFFFFFF) // -1: NULL, unless a value follows
			out, err := encode(i, v, buf)
			if err != nil {
				return fmt.Errorf("encode %v: %w", v, err)
			}
			if out != nil { // nil is NULL
				buf = out
				binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
			}
		}
		if len(buf) >= copyChunk {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	return endCopy(w, buf, src)
}

// endCopy writes the rest of buf and COPY's end, unless src failed.
func endCopy(w io.Writer, buf []byte, src pgx.CopyFromSource) error {
	if err := src.Err(); err != nil {
		return err
	}
	buf = binary.BigEndian.AppendUint16(buf, 0xFFFF) // -1: the end
	_, err := w.Write(buf)
	return err
}

// tupleAppender is a CopyFromSource that writes its rows in COPY's binary format itself,
// when the columns have the types it knows (encodes), without a value boxed per column.
type tupleAppender interface {
	pgx.CopyFromSource
	encodes(oids []uint32) bool
	appendTuple(buf []byte) []byte // the current row
}

// appendField appends one value of COPY's binary format: its length, then its bytes.
func appendField(buf, v []byte) []byte {
	return append(binary.BigEndian.AppendUint32(buf, uint32(len(v))), v...)
}

// appendNullable appends v as a field of COPY's binary format, or NULL when v is nil.
func appendNullable(buf, v []byte) []byte {
	if v == nil {
		return binary.BigEndian.AppendUint32(buf, 0xFFFFFFFF)
	}
	return appendField(buf, v)
}
