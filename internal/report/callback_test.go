package report

import "testing"

func TestCallbackURL(t *testing.T) {
	cases := []struct {
		in, want string
		private  bool
		ok       bool
	}{
		{"", "", false, true},
		{"https://hooks.example.com/contentapi?x=1", "https://hooks.example.com/contentapi?x=1", false, true},
		{"https://Hooks.Example.COM/a", "https://hooks.example.com/a", false, true},
		{"http://hooks.example.com/a", "", false, false},
		{"https://user:pw@hooks.example.com/a", "", false, false},
		{"https://10.0.0.1/a", "", false, false},
		{"https://localhost/a", "", false, false},
		{"https://hooks.example.com:8443/a", "", false, false},
		{"/relative", "", false, false},
		{"ftp://hooks.example.com/a", "", false, false},
		{"http://127.0.0.1:8080/hook", "http://127.0.0.1:8080/hook", true, true},
	}
	for _, c := range cases {
		cb := Callback{CallbackURL: c.in}
		err := cb.normalizeCallback(Options{AllowPrivate: c.private})
		if (err == nil) != c.ok || (c.ok && cb.CallbackURL != c.want) {
			t.Errorf("%q: got %q, %v", c.in, cb.CallbackURL, err)
		}
	}
}
