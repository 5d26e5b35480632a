package main

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/contentapi/contentapi/internal/keywords"
	"github.com/contentapi/contentapi/internal/keywords/local"
	"github.com/contentapi/contentapi/internal/postgres"
)

func main() {
	ctx := context.Background()
	pool, err := postgres.Connect(ctx, os.Args[1])
	if err != nil {
		panic(err)
	}
	cols, sql := local.New(pool), local.New(pool, local.WithColumnsBudget(0))
	f := func(v float64) *float64 { return &v }
	big := []string{"bigpublisher.example"}
	three := []string{"bigpublisher.example", "site0001.example", "site0002.example"}
	type gq struct {
		comps   []string
		filters keywords.Filters
		order   []keywords.OrderKey
	}
	filtered := keywords.Filters{Ranges: map[keywords.Field]keywords.Range{keywords.FieldSearchVolume: {Min: f(500)},
		keywords.FieldDifficulty: {Max: f(30)}, keywords.FieldCompetitorPosition: {Max: f(10)}}}
	qs := []gq{
		{big, keywords.Filters{}, nil},
		{big, filtered, nil},
		{big, filtered, []keywords.OrderKey{{Field: keywords.FieldCompetitorPosition}, {Field: keywords.FieldSearchVolume, Desc: true}}},
		{big, keywords.Filters{}, []keywords.OrderKey{{Field: keywords.FieldDifficulty}, {Field: keywords.FieldCPC, Desc: true}}},
		{three, keywords.Filters{Include: []string{"coffee"}, Exclude: []string{"cheap"}}, nil},
		{three, keywords.Filters{Intents: []string{"commercial"}, Ranges: map[keywords.Field]keywords.Range{keywords.FieldCPC: {Min: f(1.5)}}}, []keywords.OrderKey{{Field: keywords.FieldKeyword, Desc: true}}},
	}
	if len(os.Args) > 2 {
		req := keywords.GapsRequest{Domain: "site0300.example", Competitors: big, Limit: 1000}
		cols.Gaps(ctx, req)
		fp, _ := os.Create("/tmp/gaps2.prof")
		pprof.StartCPUProfile(fp)
		var ru0, ru1 syscall.Rusage
		syscall.Getrusage(0, &ru0)
		t0 := time.Now()
		for i := 0; i < 10; i++ {
			cols.Gaps(ctx, req)
		}
		syscall.Getrusage(0, &ru1)
		pprof.StopCPUProfile()
		fmt.Println("wall per call", time.Since(t0)/10, "cpu per call ms", (ru1.Utime.Usec-ru0.Utime.Usec+1e6*(ru1.Utime.Sec-ru0.Utime.Sec))/10000)
		return
	}
	for _, q := range qs {
		after := ""
		for page := 0; page < 3; page++ {
			req := keywords.GapsRequest{Domain: "site0300.example", Competitors: q.comps, Limit: 1000, Filters: q.filters, Order: q.order, After: after}
			t0 := time.Now()
			a, err1 := cols.Gaps(ctx, req)
			t1 := time.Now()
			b, err2 := sql.Gaps(ctx, req)
			t2 := time.Now()
			fmt.Printf("gaps %v %+v %v page %d: total %d/%d same=%v cols %v sql %v %v %v\n", q.comps, q.filters, q.order, page, a.Total, b.Total,
				reflect.DeepEqual(a, b), t1.Sub(t0).Round(time.Millisecond), t2.Sub(t1).Round(time.Millisecond), err1, err2)
			if a.Next == "" {
				break
			}
			after = a.Next
		}
	}
	rq := []struct {
		filters keywords.Filters
		order   []keywords.OrderKey
	}{
		{keywords.Filters{}, nil},
		{keywords.Filters{Ranges: map[keywords.Field]keywords.Range{keywords.FieldSearchVolume: {Min: f(500)}, keywords.FieldDifficulty: {Max: f(30)}}}, []keywords.OrderKey{{Field: keywords.FieldTraffic, Desc: true}}},
		{keywords.Filters{Ranges: map[keywords.Field]keywords.Range{keywords.FieldPosition: {Max: f(10)}}, Intents: []string{"commercial"}}, []keywords.OrderKey{{Field: keywords.FieldDifficulty}, {Field: keywords.FieldCPC, Desc: true}}},
		{keywords.Filters{Include: []string{"coffee"}}, []keywords.OrderKey{{Field: keywords.FieldKeyword}}},
	}
	for _, q := range rq {
		after := ""
		for page := 0; page < 3; page++ {
			req := keywords.RankingsRequest{Domain: "bigpublisher.example", Filters: q.filters, Order: q.order, Page: keywords.Page{Limit: 1000, After: after}}
			t0 := time.Now()
			a, err1 := cols.Rankings(ctx, req)
			t1 := time.Now()
			b, err2 := sql.Rankings(ctx, req)
			t2 := time.Now()
			fmt.Printf("rankings %+v %v page %d: total %d/%d same=%v cols %v sql %v %v %v\n", q.filters, q.order, page, a.Total, b.Total,
				reflect.DeepEqual(a, b), t1.Sub(t0).Round(time.Millisecond), t2.Sub(t1).Round(time.Millisecond), err1, err2)
			if a.Next == "" {
				break
			}
			after = a.Next
		}
	}
}
