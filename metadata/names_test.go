package metadata

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/funcmcp/funcmcp/internal/inittrace"
)

// The name rules as regular expressions: what the checks must match
// exactly. They are compiled here, in the tests, never at init.
const (
	functionNamePattern = `(?i)^[a-z][a-z0-9_\-]{0,127}$`
	bindingNamePattern  = `^([a-zA-Z][a-zA-Z0-9]{0,127}|\$return)$`
)

// TestInitAllocatesLittle: every program that links metadata (funchost,
// every worker) runs its init before main. Compiling the name rules as
// regular expressions there cost 3,298 allocations (the bounded
// repetitions expand to 128 copies each).
func TestInitAllocatesLittle(t *testing.T) {
	c := inittrace.Of(t, "github.com/funcmcp/funcmcp/metadata")
	if c.Allocs > 64 {
		t.Errorf("metadata's init allocates %d times (%d bytes), want at most 64", c.Allocs, c.Bytes)
	}
}

// nameCases are names at the edges of the rules: lengths around 128,
// every class of character, the runes that fold to ASCII letters (ſ, the
// Kelvin sign), invalid UTF-8 and line ends.
func nameCases() []string {
	cases := []string{"", "a", "A", "z", "Z", "$return", "$Return", "$return ", "$", "1", "_", "-", "a1", "a_", "a-", "a.", "a b",
		"a\n", "\na", "a\x00", "\xff", "a\xff", "\u017f", "\u212a", "a\u017f", "\u212a\u212a", "é", "aé", "ǅ", "ａ", "host", "HOST", "Host",
		"get_weather", "getWeather", "get-weather-2"}
	for _, n := range []int{126, 127, 128, 129, 130} {
		cases = append(cases, strings.Repeat("a", n), "a"+strings.Repeat("1", n-1), strings.Repeat("\u017f", n),
			"a"+strings.Repeat("-", n-1), strings.Repeat("\u212a", n-1)+"a")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("aZz09_-.$ \u017f\u212aé\n")
	for range 2000 {
		var sb strings.Builder
		for range rng.IntN(132) {
			sb.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		cases = append(cases, sb.String())
	}
	return cases
}

func TestNameRulesMatchTheirPatterns(t *testing.T) {
	fnRE, bindRE := regexp.MustCompile(functionNamePattern), regexp.MustCompile(bindingNamePattern)
	check := func(name string) {
		if got, want := validFunctionName(name), fnRE.MatchString(name); got != want {
			t.Errorf("validFunctionName(%q) = %v, the pattern says %v", name, got, want)
		}
		if got, want := validBindingName(name), bindRE.MatchString(name); got != want {
			t.Errorf("validBindingName(%q) = %v, the pattern says %v", name, got, want)
		}
	}
	for _, name := range nameCases() {
		check(name)
	}
	// Runes alone, first and second: every one up to U+3000 (the folds to
	// ASCII letters are U+017F and U+212A), then a sample.
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r > 0x3000 && r%97 != 0 || !utf8.ValidRune(r) {
			continue
		}
		s := string(r)
		check(s)
		check("a" + s)
	}
}

// FuzzNameRules compares the name checks with their patterns.
func FuzzNameRules(f *testing.F) {
	for _, name := range nameCases()[:60] {
		f.Add(name)
	}
	fnRE, bindRE := regexp.MustCompile(functionNamePattern), regexp.MustCompile(bindingNamePattern)
	f.Fuzz(func(t *testing.T, name string) {
		if got, want := validFunctionName(name), fnRE.MatchString(name); got != want {
			t.Errorf("validFunctionName(%q) = %v, the pattern says %v", name, got, want)
		}
		if got, want := validBindingName(name), bindRE.MatchString(name); got != want {
			t.Errorf("validBindingName(%q) = %v, the pattern says %v", name, got, want)
		}
	})
}
