package binding

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/funcmcp/funcmcp/internal/inittrace"
)

// toolNamePattern is the MCP specification's tool name rule as a regular
// expression: what validToolName must match exactly. It is compiled here,
// in the tests, never at init.
const toolNamePattern = `^[A-Za-z0-9_.-]{1,128}$`

// TestInitAllocatesLittle: every program that links binding (funchost,
// every worker) runs its init before main. Compiling the tool name rule as
// a regular expression there cost 1,693 allocations (the bounded
// repetition expands to 128 copies), and the URI template expressions 75
// more, used only by apps with resources.
func TestInitAllocatesLittle(t *testing.T) {
	c := inittrace.Of(t, "github.com/funcmcp/funcmcp/binding")
	if c.Allocs > 64 {
		t.Errorf("binding's init allocates %d times (%d bytes), want at most 64", c.Allocs, c.Bytes)
	}
}

func toolNameCases() []string {
	cases := []string{"", "a", "Z", "0", "_", ".", "-", "a b", "a\n", "\na", "a\x00", "\xff", "a\xff", "é", "\u212a", "get_weather", "a.b-c_d"}
	for _, n := range []int{127, 128, 129} {
		cases = append(cases, strings.Repeat("a", n), strings.Repeat(".", n), strings.Repeat("a", n-1)+"é")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []rune("aZz09_-.$ é\n\u212a")
	for range 2000 {
		var sb strings.Builder
		for range rng.IntN(132) {
			sb.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		cases = append(cases, sb.String())
	}
	return cases
}

func TestToolNameRuleMatchesItsPattern(t *testing.T) {
	re := regexp.MustCompile(toolNamePattern)
	check := func(name string) {
		if got, want := validToolName(name), re.MatchString(name); got != want {
			t.Errorf("validToolName(%q) = %v, the pattern says %v", name, got, want)
		}
	}
	for _, name := range toolNameCases() {
		check(name)
	}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r > 0x3000 && r%97 != 0 || !utf8.ValidRune(r) {
			continue
		}
		check(string(r))
		check("a" + string(r))
	}
}

// FuzzToolNameRule compares validToolName with its pattern.
func FuzzToolNameRule(f *testing.F) {
	for _, name := range toolNameCases()[:40] {
		f.Add(name)
	}
	re := regexp.MustCompile(toolNamePattern)
	f.Fuzz(func(t *testing.T, name string) {
		if got, want := validToolName(name), re.MatchString(name); got != want {
			t.Errorf("validToolName(%q) = %v, the pattern says %v", name, got, want)
		}
	})
}
