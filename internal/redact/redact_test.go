package redact

import (
	"errors"
	"fmt"
	"testing"
)

func TestQuery(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"dry_run=true&topic=coffee", "dry_run=true&topic=coffee"},
		{"password=hunter2", "password=****"},
		{"sslmode=disable&password=hunter2&pool_max_conns=4", "sslmode=disable&password=****&pool_max_conns=4"},
		{"token=abc&api_key=k&apikey=k&key=k&secret=s&client_secret=s&access_token=t&X-Amz-Signature=s",
			"token=****&api_key=****&apikey=****&key=****&secret=****&client_secret=****&access_token=****&X-Amz-Signature=****"},
		{"PassWord=x&pwd=y&sslpassword=z", "PassWord=****&pwd=****&sslpassword=****"},
		{"pass%77ord=x", "pass%77ord=****"}, // an encoded name is still the name
		{"keyword=coffee&keys=3&monkey=1", "keyword=coffee&keys=3&monkey=1"},
		{"password&token=", "password&token=****"},
	} {
		if got := Query(c.in); got != c.want {
			t.Errorf("Query(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"postgres://app:hunter2@db:5432/app?sslmode=disable", "postgres://app:xxxxx@db:5432/app?sslmode=disable"},
		{"postgres://app@db/app?password=hunter2&sslmode=require", "postgres://app@db/app?password=****&sslmode=require"},
		{"redis://:hunter2@cache:6379/0", "redis://:xxxxx@cache:6379/0"},
		{"https://example.com/hook?token=abc#frag", "https://example.com/hook?token=****#frag"},
		{"https://example.com/", "https://example.com/"},
		{"not a url", "not a url"},
	} {
		if got := URL(c.in); got != c.want {
			t.Errorf("URL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestConnString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		// Key/value connection strings: plain, spaced, quoted (with an escaped quote), tabs.
		{"host=db user=x password=hunter2", "host=db user=x password=****"},
		{"host=db password = hunter2 port=abc", "host=db password = **** port=abc"},
		{`host=db password='hun\'t er2' dbname=app`, "host=db password=**** dbname=app"},
		{"host=db\tpassword=hunter2\tsslpassword='x y'", "host=db\tpassword=****\tsslpassword=****"},
		{"password=hunter2 host=db", "password=**** host=db"},
		{"host=db user=x", "host=db user=x"},
		// URLs, parseable or not: the user's password and secret query parameters.
		{"postgres://app:hunter2@db:5432/app?sslmode=disable", "postgres://app:xxxxx@db:5432/app?sslmode=disable"},
		{"postgres://app@db/app?sslmode=require&password=hunter2", "postgres://app@db/app?sslmode=require&password=****"},
		{"postgres://app:hun%zzter2@db/app", "postgres://app:xxxxx@db/app"},
		{"postgres://app:hun@ter2@db:abc/app?password=hunter3&x=1", "postgres://app:xxxxx@db:abc/app?password=****&x=1"},
		{"redis://:hunter2@cache:6379/0", "redis://:xxxxx@cache:6379/0"},
		// Quoted in the text of an error.
		{"cannot parse `host=db password=hunter2`: invalid port", "cannot parse `host=db password=**** invalid port"},
		{`parse "redis://u:hun%zzter2@h/0": invalid URL escape "%zz"`, `parse "redis://u:xxxxx@h/0": invalid URL escape "%zz"`},
		{"", ""},
		{"sk_test_123", "sk_test_123"},
	} {
		if got := ConnString(c.in); got != c.want {
			t.Errorf("ConnString(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestError(t *testing.T) {
	base := errors.New("cannot parse `host=db password=hunter2`")
	err := Error(fmt.Errorf("connect: %w", base))
	if err.Error() != "connect: cannot parse `host=db password=****" || !errors.Is(err, base) {
		t.Fatalf("Error = %q (is base: %v)", err, errors.Is(err, base))
	}
	plain := errors.New("connection refused")
	if Error(plain) != plain || Error(nil) != nil { //nolint:errorlint // the very same value must come back, not a wrapper
		t.Fatal("an error without secrets is not returned as it is")
	}
}
