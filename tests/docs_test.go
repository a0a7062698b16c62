package tests

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the code blocks of README.md and docs/ from their sources")

// A code block's source is named on the line before its opening fence:
//
//	<!-- from: function-app-sample/testdata/primes.function.json -->
//	<!-- from: function-app-sample/weather.go#register -->
//
// The first form is a whole file; the second a region of a Go file between
// the lines "//docs:begin register" and "//docs:end register", with the
// region's common indentation removed.
var fromMarker = regexp.MustCompile(`^<!-- from: ([^#\s]+)(?:#([\w-]+))? -->$`)

// docBlock is one fenced code block of a Markdown file.
type docBlock struct {
	file      string
	line      int // of the opening fence, 1-based
	lang      string
	from      string // the source file, "" without a marker
	region    string
	start     int // index of the first content line
	end       int // index of the closing fence
	content   string
	prevIndex int // index of the line before the fence
}

// markdownFiles lists README.md and docs/**/*.md.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	files := []string{filepath.Join(root, "README.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	})
	require.NoError(t, err)
	return files
}

// codeBlocks returns the fenced blocks of lines.
func codeBlocks(file string, lines []string) ([]docBlock, error) {
	var blocks []docBlock
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if !strings.HasPrefix(l, "```") {
			continue
		}
		b := docBlock{file: file, line: i + 1, lang: strings.TrimSpace(strings.TrimPrefix(l, "```")), start: i + 1, prevIndex: i - 1}
		if i > 0 {
			if m := fromMarker.FindStringSubmatch(strings.TrimSpace(lines[i-1])); m != nil {
				b.from, b.region = m[1], m[2]
			}
		}
		j := i + 1
		for ; j < len(lines) && !strings.HasPrefix(lines[j], "```"); j++ {
		}
		if j == len(lines) {
			return nil, fmt.Errorf("%s:%d: code block never closed", file, i+1)
		}
		b.end = j
		b.content = strings.Join(lines[i+1:j], "\n")
		blocks = append(blocks, b)
		i = j
	}
	return blocks, nil
}

// sourceText returns what a block must hold: the whole file, or its region.
func sourceText(root, from, region string) (string, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(from)))
	if err != nil {
		return "", err
	}
	text := strings.TrimRight(string(data), "\n")
	if region == "" {
		return text, nil
	}
	var out []string
	in, found := false, false
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		switch strings.TrimSpace(l) {
		case "//docs:begin " + region:
			in, found = true, true
			continue
		case "//docs:end " + region:
			in = false
			continue
		}
		if in {
			out = append(out, l)
		}
	}
	if !found {
		return "", fmt.Errorf("%s has no region %q (//docs:begin %s … //docs:end %s)", from, region, region, region)
	}
	return strings.TrimRight(dedent(out), "\n"), nil
}

// dedent removes the tabs every non-empty line starts with, and any
// //docs: marker of a nested region.
func dedent(lines []string) string {
	lines = slices.DeleteFunc(slices.Clone(lines), func(l string) bool {
		return strings.HasPrefix(strings.TrimSpace(l), "//docs:")
	})
	common := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, "\t"))
		if common < 0 || n < common {
			common = n
		}
	}
	for i, l := range lines {
		if len(l) >= common && common > 0 {
			lines[i] = l[common:]
		}
	}
	return strings.Join(lines, "\n")
}

// TestDocsCodeBlocks checks every Go and JSON block of README.md and docs/
// against the file it comes from (the sample, golden files, examples that
// compile), so the documentation cannot drift from the code. Run with
// -update-docs to rewrite the blocks from their sources.
func TestDocsCodeBlocks(t *testing.T) {
	root := repoRoot(t)
	checked := 0
	for _, file := range markdownFiles(t, root) {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		lines := strings.Split(string(data), "\n")
		blocks, err := codeBlocks(file, lines)
		require.NoError(t, err)
		rel, _ := filepath.Rel(root, file)
		changed := false
		for i := len(blocks) - 1; i >= 0; i-- { // from the end, so indices hold while rewriting
			b := blocks[i]
			if b.lang != "go" && b.lang != "json" {
				continue
			}
			if b.from == "" {
				t.Errorf("%s:%d: a %s block must name its source on the line before it (<!-- from: path[#region] -->)", rel, b.line, b.lang)
				continue
			}
			want, err := sourceText(root, b.from, b.region)
			if err != nil {
				t.Errorf("%s:%d: %v", rel, b.line, err)
				continue
			}
			checked++
			if b.content == want {
				continue
			}
			if *updateDocs {
				lines = slices.Replace(lines, b.start, b.end, strings.Split(want, "\n")...)
				changed = true
				continue
			}
			assert.Equal(t, want, b.content, "%s:%d: the block differs from %s (run go test ./tests -run TestDocsCodeBlocks -update-docs)", rel, b.line, b.from)
		}
		if changed {
			require.NoError(t, os.WriteFile(file, []byte(strings.Join(lines, "\n")), 0o644))
		}
	}
	assert.Positive(t, checked, "no code block was checked")
}

// mdLink is a relative link in Markdown: [text](path#anchor).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsLinks checks that every relative link of README.md and docs/ names
// a file of the repository, and every #anchor a heading of that file.
func TestDocsLinks(t *testing.T) {
	root := repoRoot(t)
	anchorsOf := map[string]map[string]bool{}
	anchors := func(file string) map[string]bool {
		if a, ok := anchorsOf[file]; ok {
			return a
		}
		a := map[string]bool{}
		data, _ := os.ReadFile(file)
		inCode := false
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "```") {
				inCode = !inCode
			}
			if !inCode && strings.HasPrefix(l, "#") {
				a[slug(strings.TrimLeft(l, "# "))] = true
			}
		}
		anchorsOf[file] = a
		return a
	}
	for _, file := range markdownFiles(t, root) {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		rel, _ := filepath.Rel(root, file)
		for _, m := range mdLink.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s: link %s: %v", rel, target, err)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(dest, ".md") && !anchors(dest)[anchor] {
				t.Errorf("%s: link %s: no heading with that anchor", rel, target)
			}
		}
	}
}

// slug is GitHub's anchor for a heading.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ' || r == '-':
			b.WriteRune('-')
		case r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestWritingToolsShowsHandlerSignatures: docs/writing-tools.md shows the
// handler type of every kind it teaches, as the worker declares it (the
// blocks are checked against the source by TestDocsCodeBlocks).
func TestWritingToolsShowsHandlerSignatures(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "writing-tools.md"))
	require.NoError(t, err)
	for _, sig := range []string{
		"type ToolHandlerFor[In, Out any] func(",
		"type ResourceHandler func(ctx context.Context, rc *ResourceContext) (*ResourceResult, error)",
		"type PromptHandler func(ctx context.Context, pc *PromptContext) (*PromptResult, error)",
		"type PromptHandlerFor[In any] func(ctx context.Context, pc *PromptContext, in In) (*PromptResult, error)",
		"func readHolidays(_ context.Context, rc *worker.ResourceContext) (*worker.ResourceResult, error) {",
		"func dayOffPrompt(_ context.Context, _ *worker.PromptContext, in DayOffArgs) (*worker.PromptResult, error) {",
	} {
		assert.True(t, strings.Contains(string(data), sig), "docs/writing-tools.md does not show %s", sig)
	}
}
