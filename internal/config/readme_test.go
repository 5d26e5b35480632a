package config

import (
	"os"
	"strings"
	"testing"
)

// Every variable is documented in the README with its default.
func TestREADMEListsEveryVariable(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vars {
		if !strings.Contains(string(readme), "| `"+v.name+"` |") {
			t.Errorf("README does not list %s", v.name)
		}
	}
}
