package backplane

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/funcmcp/funcmcp/internal/inittrace"
)

// The id rules as regular expressions: what the checks must match exactly.
// They are compiled here, in the tests, never at init.
const (
	messageIDRule  = `^[A-Za-z0-9_-]{1,64}$`
	instanceIDRule = `^[a-z0-9]{1,49}$`
)

// TestInitAllocatesLittle: funchost runs this package's init before main,
// with or without a backplane. Compiling the id rules as regular
// expressions there cost 1,337 allocations (their bounded repetitions
// expand to 64 and 49 copies).
func TestInitAllocatesLittle(t *testing.T) {
	c := inittrace.Of(t, "github.com/funcmcp/funcmcp/host/internal/backplane")
	if c.Allocs > 64 {
		t.Errorf("backplane's init allocates %d times (%d bytes), want at most 64", c.Allocs, c.Bytes)
	}
}

func TestIDRulesMatchTheirPatterns(t *testing.T) {
	msgRE, instRE := regexp.MustCompile(messageIDRule), regexp.MustCompile(instanceIDRule)
	cases := []string{"", "a", "A", "0", "_", "-", ".", "a b", "a\n", "\na", "\xff", "é", "\u212a", "abc123", "ABC-_x"}
	for _, n := range []int{48, 49, 50, 63, 64, 65} {
		cases = append(cases, strings.Repeat("a", n), strings.Repeat("Z", n), strings.Repeat("-", n))
	}
	rng := rand.New(rand.NewPCG(5, 6))
	alphabet := []rune("azAZ09_-. é\n")
	for range 3000 {
		var sb strings.Builder
		for range rng.IntN(70) {
			sb.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		cases = append(cases, sb.String())
	}
	for r := rune(0); r < 0x3000; r++ {
		cases = append(cases, string(r), "a"+string(r))
	}
	for _, id := range cases {
		if got, want := ValidMessageID(id), msgRE.MatchString(id); got != want {
			t.Errorf("ValidMessageID(%q) = %v, the pattern says %v", id, got, want)
		}
		if got, want := ValidInstanceID(id), instRE.MatchString(id); got != want {
			t.Errorf("ValidInstanceID(%q) = %v, the pattern says %v", id, got, want)
		}
	}
}
