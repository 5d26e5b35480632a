package importer_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/importer"
	"github.com/contentapi/contentapi/internal/keywords/local"
	"github.com/contentapi/contentapi/internal/testenv"
)

// trendsOf reads what the local provider answers for the keywords' trends.
func trendsOf(t *testing.T, pool *pgxpool.Pool, country string, kws ...string) map[string]keywords.Keyword {
	t.Helper()
	ks := make([]keywords.Keyword, len(kws))
	ptrs := make([]*keywords.Keyword, len(kws))
	for i, k := range kws {
		ks[i] = keywords.Keyword{Keyword: k}
		ptrs[i] = &ks[i]
	}
	if err := local.New(pool).LabelTrends(context.Background(), country, "en", ptrs); err != nil {
		t.Fatal(err)
	}
	out := map[string]keywords.Keyword{}
	for _, k := range ks {
		out[k.Keyword] = k
	}
	return out
}

func mv(year, month int, v int64) keywords.MonthlyVolume {
	return keywords.MonthlyVolume{Year: year, Month: month, SearchVolume: v}
}

// TestImportMonthlySearches imports Keyword Planner's monthly columns, DataForSEO's
// monthly_searches and Semrush's Trend, through the merge path, a new table and a direct
// load, and reads them back as the answers do: volumes where the export has them, the trend
// by the documented rule, nothing where it has none.
func TestImportMonthlySearches(t *testing.T) {
	planner := "Keyword,Avg. monthly searches,Searches: Aug 2025,Searches: Sep 2025,Searches: Oct 2025,Searches: Nov 2025,Searches: Dec 2025,Searches: Jan 2026\n" +
		"cold brew,1000,100,100,100,200,200,200\n" +
		"iced latte,500,500,500,500,500,520,480\n" +
		"pumpkin spice,900,900,900,900,100,,50\n" + // a blank month: kept blank, no trend (not 6 consecutive)
		"mocha,10,,,,,,\n" + // no monthly data at all
		"bad month,10,1,2,3,4,5,x\n" // rejected
	dfs := "keyword,search_volume,monthly_searches\n" +
		`espresso,4000,"[{""year"":2026,""month"":1,""search_volume"":1000},{""year"":2025,""month"":12,""search_volume"":1000},{""year"":2025,""month"":11,""search_volume"":1000},{""year"":2025,""month"":10,""search_volume"":2000},{""year"":2025,""month"":9,""search_volume"":2000},{""year"":2025,""month"":8,""search_volume"":2000}]"` + "\n" +
		"decaf,10,\n" +
		"cortado,10,[]\n"
	semrush := "Keyword,Volume,Trend\n" +
		`flat white,2400,"0.50,0.50,0.50,0.50,0.50,0.50,0.50,0.50,0.50,1.00,1.00,1.00"` + "\n" +
		`ristretto,300,"1.00,1.00,1.00,1.00,1.00,1.00,1.00,1.00,1.00,1.00,1.00,1.00"` + "\n" +
		"lungo,100,\n"

	for _, path := range []string{"merge", "new table", "direct"} {
		t.Run(path, func(t *testing.T) {
			pool := testenv.Postgres(t)
			switch path {
			case "new table":
				importer.AlwaysNewTable(t, nil)
			case "direct":
				importer.AlwaysDirect(t, 2, 0)
			}
			ctx := context.Background()
			if path == "merge" { // a stored row first, so the file's rows merge with it
				if _, err := importer.ImportKeywords(ctx, pool, strings.NewReader("keyword,volume\ncold brew,5\n"), importer.Options{}); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := importer.ImportKeywords(ctx, pool, strings.NewReader(planner), importer.Options{Source: "keyword-planner"})
			if err != nil {
				t.Fatal(err)
			}
			if rep.RejectedRows != 1 || len(rep.Rejected) != 1 || !strings.Contains(rep.Rejected[0].Reason, "Searches: Jan 2026") {
				t.Errorf("rejections %+v, want the bad month named", rep.Rejected)
			}
			for _, f := range []string{dfs, semrush} {
				if _, err := importer.ImportKeywords(ctx, pool, strings.NewReader(f), importer.Options{}); err != nil {
					t.Fatal(err)
				}
			}
			got := trendsOf(t, pool, "us", "cold brew", "iced latte", "pumpkin spice", "mocha", "espresso", "decaf", "cortado",
				"flat white", "ristretto", "lungo")
			want := map[string]struct {
				months []keywords.MonthlyVolume
				trend  string
			}{
				"cold brew":     {[]keywords.MonthlyVolume{mv(2025, 8, 100), mv(2025, 9, 100), mv(2025, 10, 100), mv(2025, 11, 200), mv(2025, 12, 200), mv(2026, 1, 200)}, keywords.TrendIncreasing},
				"iced latte":    {[]keywords.MonthlyVolume{mv(2025, 8, 500), mv(2025, 9, 500), mv(2025, 10, 500), mv(2025, 11, 500), mv(2025, 12, 520), mv(2026, 1, 480)}, keywords.TrendStable},
				"pumpkin spice": {[]keywords.MonthlyVolume{mv(2025, 8, 900), mv(2025, 9, 900), mv(2025, 10, 900), mv(2025, 11, 100), mv(2026, 1, 50)}, ""},
				"mocha":         {nil, ""},
				"espresso":      {[]keywords.MonthlyVolume{mv(2025, 8, 2000), mv(2025, 9, 2000), mv(2025, 10, 2000), mv(2025, 11, 1000), mv(2025, 12, 1000), mv(2026, 1, 1000)}, keywords.TrendDecreasing},
				"decaf":         {nil, ""},
				"cortado":       {nil, ""},
				"flat white":    {nil, keywords.TrendIncreasing}, // Semrush: a trend, no volumes
				"ristretto":     {nil, keywords.TrendStable},
				"lungo":         {nil, ""},
			}
			for kw, w := range want {
				k := got[kw]
				if !reflect.DeepEqual(k.MonthlySearches, w.months) || k.Trend != w.trend {
					t.Errorf("%s: months %v trend %q, want %v %q", kw, k.MonthlySearches, k.Trend, w.months, w.trend)
				}
			}
			// A file without monthly columns keeps the stored ones.
			if _, err := importer.ImportKeywords(ctx, pool, strings.NewReader("keyword,volume\ncold brew,7\n"), importer.Options{}); err != nil {
				t.Fatal(err)
			}
			if k := trendsOf(t, pool, "us", "cold brew")["cold brew"]; len(k.MonthlySearches) != 6 || k.Trend != keywords.TrendIncreasing {
				t.Errorf("cold brew after a file without months: %v %q", k.MonthlySearches, k.Trend)
			}
		})
	}
}
