package app

import (
	"strings"
	"testing"

	"github.com/contentapi/contentapi/internal/config"
	"github.com/contentapi/contentapi/internal/job"
)

// The job path's production tuning is job.DefaultConfig's, apart from the deadline derived
// from JOB_TIMEOUT.
func TestJobConfigDefaults(t *testing.T) {
	c, err := config.Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	jc := JobConfig(c)
	if d := job.DefaultConfig; jc.MaxAttempts != d.MaxAttempts || jc.StaleAfter != d.StaleAfter || jc.EnqueueGrace != d.EnqueueGrace {
		t.Fatalf("job config %+v, want job.DefaultConfig's %+v", jc, d)
	}
}

// The start log shows no secret: secret variables are masked, and so are the passwords and
// secret query parameters of URLs.
func TestDescribeMasksSecrets(t *testing.T) {
	d := Describe(env(map[string]string{
		"DATABASE_URL":      "postgres://app:hunter2@db:5432/app",
		"STRIPE_SECRET_KEY": "sk_test_123",
		"ADMIN_TOKEN":       "tok",
	}))
	for k, v := range d {
		if strings.Contains(v, "hunter2") || strings.Contains(v, "sk_test_123") || v == "tok" {
			t.Errorf("%s shows a secret: %s", k, v)
		}
	}
	if !strings.Contains(d["DATABASE_URL"], "app:") || d["STRIPE_SECRET_KEY"] != "****" || d["API_ADDR"] != ":8080" {
		t.Fatalf("describe %v", d)
	}

	// Passwords and keys given as query parameters, in secret and other URLs.
	d = Describe(env(map[string]string{
		"DATABASE_URL":        "postgres://app@db:5432/app?sslmode=disable&password=hunter2",
		"REDIS_URL":           "redis://cache:6379/0?password=hunter3",
		"DATAFORSEO_BASE_URL": "https://dfs.example/api?api_key=hunter4&v=3",
	}))
	if d["DATABASE_URL"] != "postgres://app@db:5432/app?sslmode=disable&password=****" ||
		d["REDIS_URL"] != "redis://cache:6379/0?password=****" || d["DATAFORSEO_BASE_URL"] != "https://dfs.example/api?api_key=****&v=3" {
		t.Fatalf("describe %v", d)
	}
	if d := Describe(env(map[string]string{"SMTP_URL": "smtp://user:hunter2@mail:587"})); strings.Contains(d["SMTP_URL"], "hunter2") {
		t.Errorf("SMTP_URL logged as %q", d["SMTP_URL"])
	}
}

// The start log's description masks passwords in connection strings, in key/value and URL
// forms, whether or not the variable is itself a secret.
func TestDescribeMasksConnectionStrings(t *testing.T) {
	for _, v := range []map[string]string{
		{"DATABASE_URL": "host=db user=x password=hunter2"},
		{"DATABASE_URL": "host=db user=x password='hun ter2'"},
		{"DATABASE_URL": "postgres://x:hun%zzter2@db/app"},
		{"DATABASE_MIGRATE_URL": "postgres://x:hunter2@db/app?password=hunter2"},
		{"REDIS_URL": "host=cache password=hunter2"},
		{"SMTP_URL": "smtp://mailer:hunter2@smtp.example"},
		{"PUBLIC_BASE_URL": "https://u:hunter2@api.example"},
	} {
		for name := range v {
			if d := Describe(env(v))[name]; strings.Contains(d, "hun") || strings.Contains(d, "ter2") {
				t.Errorf("Describe shows the password: %s=%s", name, d)
			}
		}
	}
}
