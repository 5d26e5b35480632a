package redact

import "testing"

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
