package testenv

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// CommandsEnv names a directory holding api, worker and ctl already built for this run
// (make test builds them once into its BIN): tests that start the real binaries use them
// rather than each linking their own.
const CommandsEnv = "CONTENTAPI_TEST_BIN"

var (
	commandsOnce sync.Once
	commandsDir  string
	commandsErr  error
	commandsOut  []byte
)

// Commands returns the directory of the built api, worker and ctl: CommandsEnv's when set,
// else one this test binary builds them into once (removed when the package's tests end).
func Commands(t testing.TB) string {
	t.Helper()
	commandsOnce.Do(func() {
		if dir := os.Getenv(CommandsEnv); dir != "" {
			commandsDir, commandsErr = filepath.Abs(dir)
			return
		}
		if commandsDir, commandsErr = os.MkdirTemp("", "contentapi-bin"); commandsErr != nil {
			return
		}
		dir := commandsDir
		mu.Lock()
		cleanups = append(cleanups, func() { _ = os.RemoveAll(dir) })
		mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		//nolint:gosec // the go tool, with a directory this process just made
		commandsOut, commandsErr = exec.CommandContext(ctx, "go", "build", "-o", commandsDir+string(filepath.Separator),
			"github.com/contentapi/contentapi/cmd/api",
			"github.com/contentapi/contentapi/cmd/worker",
			"github.com/contentapi/contentapi/cmd/ctl").CombinedOutput()
	})
	if commandsErr != nil {
		t.Fatalf("testenv: build the commands: %v\n%s", commandsErr, commandsOut)
	}
	return commandsDir
}
