package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/contentapi/contentapi/internal/postgres"
)

func TestMain(m *testing.M) { Main(m) }

// The package's database, a copy of the template, holds every embedded migration.
func TestPostgresMigrated(t *testing.T) {
	if err := postgres.SchemaReady(context.Background(), Postgres(t)); err != nil {
		t.Fatal(err)
	}
}

// Building a template drops those of other migrations (an older checkout's), and a copy of
// the new one holds every migration.
func TestTemplateReplacesOthers(t *testing.T) {
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, ServerDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	buf := make([]byte, 4)
	_, _ = rand.Read(buf)
	id := hex.EncodeToString(buf)
	old, template, copied := templatePrefix+"old_"+id, templatePrefix+"test_"+id, "contentapi_test_copy_"+id
	drop := func(db string) {
		if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{db}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Error(err)
		}
	}
	defer drop(old)
	defer drop(template)
	defer drop(copied)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{old}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	if err := createMigrated(ctx, admin, copied, template); err != nil {
		t.Fatal(err)
	}
	var left []string
	rows, err := admin.Query(ctx, "SELECT datname FROM pg_database WHERE datname IN ($1, $2) ORDER BY datname", old, template)
	if err == nil {
		left, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0] != template {
		t.Errorf("templates left %v, want %s alone", left, template)
	}
	pool, err := postgres.Connect(ctx, databaseDSN(admin, copied))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := postgres.SchemaReady(ctx, pool); err != nil {
		t.Error(err)
	}
}
