package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestInitialisersStaySmall: every command pays for every package
// initialiser in the binary before it does anything (deps on one library
// is start-up bound). tablewriter v1.1.x builds an 8192-entry width cache
// in its init (660 KB, ~0.3 ms and 160 page faults of each run), which is
// why go.mod pins v1.0.9; this fails if an upgrade, or a new package-level
// table of ours, brings such a cost back. The test binary links what the
// command links (and the testing package).
func TestInitialisersStaySmall(t *testing.T) {
	if os.Getenv("ROCMDOCTOR_INITTRACE_CHILD") == "1" {
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", "ROCMDOCTOR_INITTRACE_CHILD=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	total, packages := 0, 0
	var biggest string
	most := 0
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		// init PKG @T ms, C ms clock, N bytes, M allocs
		f := strings.Fields(sc.Text())
		if len(f) < 9 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		n, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("inittrace line %q", sc.Text())
		}
		packages++
		total += n
		if n > most {
			most, biggest = n, f[1]
		}
	}
	if packages < 20 {
		t.Fatalf("only %d initialisers traced:\n%s", packages, stderr.String())
	}
	t.Logf("%d package initialisers allocate %d bytes; the most, %d, %s", packages, total, most, biggest)
	if total > 400<<10 {
		t.Errorf("package initialisers allocate %d bytes (%s %d): every command pays for them at start-up", total, biggest, most)
	}
}
