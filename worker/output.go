package worker

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/funcmcp/funcmcp/metadata"
)

// OutputValidation says what happens to a result that breaks its tool's
// output schema or declared content kinds: [ValidationStrict] (the default)
// replies with an isError result naming the tool and the JSON pointer of
// each problem, [ValidationWarn] delivers it and logs the problems,
// [ValidationOff] checks nothing. The same setting governs funchost. The
// same modes say what happens to arguments that break the input schema
// (inputValidation): refused before the handler runs, let through with a
// log line, or not checked.
type OutputValidation = metadata.OutputValidation

// The output validation modes.
const (
	ValidationStrict = metadata.ValidationStrict
	ValidationWarn   = metadata.ValidationWarn
	ValidationOff    = metadata.ValidationOff
)

// TextCopy says which text goes with structuredContent for clients that
// read only content: [TextCopyJSON] (the default, as the MCP specification
// recommends) adds a text block holding the same JSON, [TextCopyNone] adds
// nothing, [TextCopySummary] lets the handler's own text blocks stand for
// it (the JSON copy is added only when there are none). funchost always
// sends the JSON copy of a non-object value to MCP 2026-07-28 clients, as
// SEP-2106 requires.
type TextCopy = metadata.TextCopy

// The text copy choices.
const (
	TextCopyJSON    = metadata.TextCopyJSON
	TextCopyNone    = metadata.TextCopyNone
	TextCopySummary = metadata.TextCopySummary
)

// outputSettings returns the app-wide output settings the server applies:
// the Options' values over host.json's extensions.mcp values. A host.json
// that cannot be read or holds bad values is an error naming the file.
func (a *App) outputSettings() (metadata.OutputSettings, error) {
	root := cmp.Or(a.scriptRoot, os.Getenv(metadata.EnvAppRootPath), ".")
	file := filepath.Join(root, "host.json")
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return a.output, nil
	}
	if err != nil {
		return a.output, fmt.Errorf("reading the output settings: %w", err)
	}
	fromFile, err := metadata.ParseOutputSettings(data)
	if err != nil {
		return a.output, fmt.Errorf("reading the output settings: %s: %w", file, err)
	}
	return metadata.OutputSettings{
		Validation:      cmp.Or(a.output.Validation, fromFile.Validation),
		InputValidation: cmp.Or(a.output.InputValidation, fromFile.InputValidation),
		TextCopy:        cmp.Or(a.output.TextCopy, fromFile.TextCopy),
	}, nil
}
