package importer

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The position's fast path reads what the general one reads: the same value, or an error
// for the same cells.
func TestPositionFastPathMatchesNumbers(t *testing.T) {
	cells := []string{"", "0", "00", "1", "01", "007", "9", "10", "99", "100", "999999", "0999999", "1000000",
		"1000001", "12345678", "-1", "+1", "1.0", "1,0", "1.5", "1e3", " 1", "1 ", "١", "NaN", "-", "n/a", "2147483648"}
	rng := rand.New(rand.NewPCG(3, 5))
	for range 2000 {
		b := make([]byte, rng.IntN(9))
		for i := range b {
			b[i] = "0123456789.,-+ e"[rng.IntN(16)]
		}
		cells = append(cells, string(b))
	}
	for _, comma := range []bool{false, true} {
		for _, c := range cells {
			got, gotErr := parsePosition("position", c, comma)
			want, wantErr := parsePositionNumber("position", c, comma)
			if got != want || (gotErr == nil) != (wantErr == nil) {
				t.Fatalf("%q (decimal comma %v): got %d, %v; want %d, %v", c, comma, got, gotErr, want, wantErr)
			}
		}
	}
}

// A row's market read through lastCells is the market readMarket reads, whatever the
// cells before it: an oracle over random sequences of cells, valid and not.
func TestLastCellsMarketMatchesReadMarket(t *testing.T) {
	countries := []string{"us", "US", " gb", "uk", "", "-", "usa", "u", "de", "n/a"}
	languages := []string{"en", "EN", "", "de", "eng", "e", "-"}
	rng := rand.New(rand.NewPCG(9, 2))
	for _, opts := range []Options{{}, {Country: "de", Language: "de"}, {Country: "xyz"}} {
		cols := mapColumns([]string{"keyword", "country", "language"}, []string{"Keyword", "Country", "Language"})
		var last lastCells
		for i := range 3000 {
			rec := []string{"kw", countries[rng.IntN(len(countries))], languages[rng.IntN(len(languages))]}
			if rng.IntN(10) == 0 {
				rec = rec[:1+rng.IntN(2)] // a short row: the cells absent
			}
			gc, gl, gerr := last.market(rec, cols, opts)
			wc, wl, werr := readMarket(rec, cols, opts)
			if gc != wc || gl != wl || fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Fatalf("row %d %q, options %+v: got %s %s %v; want %s %s %v", i, rec, opts, gc, gl, gerr, wc, wl, werr)
			}
		}
	}
}
