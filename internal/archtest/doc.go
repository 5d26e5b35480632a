// Package archtest holds the test of the project's import graph: every package sits on a
// declared floor and imports only packages on its own floor or below (layers_test.go), so
// a dependency that runs back up the layers fails the build's tests instead of growing.
package archtest
