package testbin

import (
	"bufio"
	"io"
	"os/exec"
	"testing"
)

// HoldWriteLock holds the SQLite database at path locked for writing, as an
// operator's sqlite3 shell left inside BEGIN IMMEDIATE does, until the test
// ends; it returns the shell's pid once the lock is held. The test fails
// where the sqlite3 shell is missing (make test-deps installs it).
func HoldWriteLock(t testing.TB, path string) int {
	t.Helper()
	bin, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Fatalf("the sqlite3 shell (make test-deps installs it): %v", err)
	}
	cmd := exec.Command(bin, path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stdin.Close() // the shell ends, its transaction with it
		_, _ = io.Copy(io.Discard, stdout)
		if err := cmd.Wait(); err != nil {
			t.Errorf("sqlite3 shell: %v", err)
		}
	})
	if _, err := io.WriteString(stdin, "BEGIN IMMEDIATE;\nSELECT 'held';\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "held\n" {
		t.Fatalf("sqlite3 shell did not take the write lock: %q, %v", line, err)
	}
	return cmd.Process.Pid
}
