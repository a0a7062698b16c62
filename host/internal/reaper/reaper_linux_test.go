package reaper

import (
	"os"
	"testing"
)

func TestProcParentOfThisProcess(t *testing.T) {
	ppid, zombie, ok := ProcParent(os.Getpid())
	if !ok || zombie || ppid != os.Getppid() {
		t.Fatalf("ProcParent(self) = %d, %v, %v; want %d, false, true", ppid, zombie, ok, os.Getppid())
	}
	if _, _, ok := ProcParent(-1); ok {
		t.Fatal("ProcParent of no process is ok")
	}
}

func TestNumbers(t *testing.T) {
	for _, n := range []int{0, 7, 10, 4194304, 999999999999999999} {
		got, ok := atoi(itoa(n))
		if !ok || got != n {
			t.Errorf("atoi(itoa(%d)) = %d, %v", n, got, ok)
		}
	}
	for _, s := range []string{"", "-1", "1a", "self", "1234567890123456789"} {
		if _, ok := atoi(s); ok {
			t.Errorf("atoi(%q) is ok", s)
		}
	}
}

func TestField(t *testing.T) {
	f, rest := field([]byte(" S 123 456\n"))
	g, _ := field(rest)
	if string(f) != "S" || string(g) != "123" {
		t.Fatalf("fields %q %q", f, g)
	}
}
