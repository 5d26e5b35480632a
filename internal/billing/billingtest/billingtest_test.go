package billingtest

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// A test binary starts one stripe-mock however many tests ask for it, and the stripe-mock
// does not outlive the binary, even one that ends without cleaning up (as a test binary
// killed by -timeout does). The binary here is this test run again as a child.
func TestStripeMockIsSharedAndDiesWithTheBinary(t *testing.T) {
	if os.Getenv("BILLINGTEST_CHILD") == "1" {
		url := StripeMock(t)
		if again := StripeMock(t); again != url {
			t.Fatalf("a second call started another stripe-mock: %s, then %s", url, again)
		}
		fmt.Printf("stripe-mock %d %s\n", mock.pid, url)
		os.Exit(0) // no cleanup of any kind runs
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestStripeMockIsSharedAndDiesWithTheBinary$", "-test.count=1")
	cmd.Env = append(os.Environ(), "BILLINGTEST_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var pid int
	var url string
	if _, err := fmt.Sscanf(string(out), "stripe-mock %d %s", &pid, &url); err != nil {
		t.Fatalf("child printed %q: %v", out, err)
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return // gone and reaped already
	}
	if err != nil {
		t.Fatalf("pidfd_open %d: %v", pid, err)
	}
	defer unix.Close(fd)
	// A pidfd turns readable when its process exits.
	n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 10_000)
	if err != nil {
		t.Fatalf("poll: %v", err)
	}
	if n == 0 {
		_ = unix.PidfdSendSignal(fd, syscall.SIGKILL, nil, 0)
		t.Fatalf("stripe-mock %d (%s) outlived its test binary by 10 s", pid, url)
	}
	if res, err := http.Get(url + "/v1/customers"); err == nil {
		res.Body.Close()
		t.Fatalf("%s still answers after its test binary exited", url)
	}
}
