package config

import (
	"strings"
	"testing"
)

// A connection string the configuration refuses is named in the error without its value,
// in key/value and URL forms (app's TestDescribeMasksConnectionStrings checks the start log).
func TestConnectionStringPasswordsNeverShown(t *testing.T) {
	for _, v := range []map[string]string{
		{"DATABASE_URL": "host=db user=x password=hunter2"},
		{"DATABASE_URL": "host=db user=x password='hun ter2'"},
		{"DATABASE_URL": "mysql://x:hunter2@db/app"},
		{"DATABASE_URL": "postgres://x:hun%zzter2@db/app"},
		{"DATABASE_MIGRATE_URL": "postgres://x:hun%zzter2@db/app?password=hunter2"},
		{"REDIS_URL": "host=cache password=hunter2"},
		{"SMTP_URL": "http://mailer:hunter2@smtp.example"},
		{"KEYWORD_MARKET_DATABASES": "gb/en=mysql://x:hunter2@db/kw"},
		{"KEYWORD_MARKET_DATABASES": "postgres://x:hunter2@db/kw"},
		{"KEYWORD_MARKET_DATABASES": "gbr/en=postgres://x:hunter2@db/kw"},
	} {
		_, err := Load(env(v))
		if err == nil {
			t.Fatalf("%v accepted", v)
		}
		if strings.Contains(err.Error(), "hun") || strings.Contains(err.Error(), "ter2") {
			t.Errorf("error shows the password: %v", err)
		}
		for name := range v {
			if !strings.Contains(err.Error(), name) {
				t.Errorf("error does not name %s: %v", name, err)
			}
		}
	}
}
