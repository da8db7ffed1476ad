package server

import (
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestHelperDial is not a test: it is the child TestSocketModeKeepsOtherUsersOut
// runs as another user. It prints "connected" or the dial error.
func TestHelperDial(t *testing.T) {
	path := os.Getenv("TIERCACHE_HELPER_DIAL")
	if path == "" {
		return // only meaningful as the child process
	}
	c, err := net.Dial("unix", path)
	if err != nil {
		os.Stdout.WriteString("refused: " + err.Error() + "\n")
		return
	}
	c.Close()
	os.Stdout.WriteString("connected\n")
}

// TestSocketModeKeepsOtherUsersOut: a child running as nobody cannot
// connect to the default 0600 socket, and can to a 0666 one (the control)
// and to a 0660 one given to its group.
func TestSocketModeKeepsOtherUsersOut(t *testing.T) {
	if os.Geteuid() != 0 {
		skipOrFail(t, "switching a child process to another user needs root")
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		skipOrFail(t, "no user nobody: %v", err)
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	gid, _ := strconv.Atoi(nobody.Gid)

	// The test binary may sit in a 0700 build directory: copy it where
	// nobody can execute it.
	dir, err := os.MkdirTemp("/tmp", "tc-bin-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "server.test")
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(dst, src)
	src.Close()
	dst.Close()

	dial := func(path string) string {
		cmd := exec.Command(bin, "-test.run=^TestHelperDial$")
		cmd.Env = []string{"TIERCACHE_HELPER_DIAL=" + path}
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helper as nobody: %v: %s", err, out)
		}
		return string(out)
	}
	_, private := startServer(t, nil)
	if out := dial(private); !strings.Contains(out, "refused") || !strings.Contains(out, "permission denied") {
		t.Fatalf("nobody connecting to a 0600 socket: %s", out)
	}
	_, open := startServer(t, func(o *Options) { o.UnixMode = 0o666 })
	if out := dial(open); !strings.Contains(out, "connected") {
		t.Fatalf("nobody connecting to a 0666 socket (control): %s", out)
	}
	// Mode 0660 with the socket given to nobody's group lets nobody in.
	_, grouped := startServer(t, func(o *Options) { o.UnixMode = 0o660; o.UnixGroup = gid })
	fi, err := os.Stat(grouped)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); int(st.Gid) != gid || fi.Mode().Perm() != 0o660 {
		t.Fatalf("socket group %d mode %o, want %d and 660", st.Gid, fi.Mode().Perm(), gid)
	}
	if out := dial(grouped); !strings.Contains(out, "connected") {
		t.Fatalf("nobody connecting to a 0660 socket of its group: %s", out)
	}
}
