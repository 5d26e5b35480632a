package crawltest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// Descendants are the processes under pid (children, theirs, ...), read from /proc: a
// browser and what it started, for tests that measure or reap them.
func Descendants(pid int) []int {
	children := map[int][]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		raw, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		f := bytes.Fields(raw[bytes.LastIndexByte(raw, ')')+1:]) // state ppid ...
		child, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if len(f) > 1 {
			parent, _ := strconv.Atoi(string(f[1]))
			children[parent] = append(children[parent], child)
		}
	}
	var out []int
	for todo := children[pid]; len(todo) > 0; todo = todo[1:] {
		out = append(out, todo[0])
		todo = append(todo, children[todo[0]]...)
	}
	return out
}

// Alive reports whether pid runs (a zombie, ended and not yet reaped, does not).
func Alive(pid int) bool {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !bytes.Contains(raw, []byte(") Z "))
}
