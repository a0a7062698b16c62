package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"

	"github.com/funcmcp/funcmcp/metadata"
	"github.com/funcmcp/funcmcp/worker"
)

// The texts the suite's scenario descriptions give.
const (
	simpleText       = "This is a simple text response for testing."
	embeddedText     = "This is an embedded resource content."
	embeddedURI      = "test://embedded-resource"
	mixedText        = "Multiple content types test:"
	mixedResourceURI = "test://mixed-content-resource"
	mixedResourceTxt = `{"test":"data","value":123}`
	errorText        = "This tool intentionally returns an error for testing"
)

// registerContentTools adds the tools that return one kind of content each
// (tools-call-simple-text, -image, -audio, -embedded-resource,
// -mixed-content) and the failing tool (tools-call-error).
func registerContentTools(app *worker.App) {
	app.ConfigureMcpTool("test_simple_text").
		WithDescription("Returns a simple text block.").
		Handle(func(context.Context, *worker.ToolContext) (*worker.Result, error) {
			return worker.TextResult(simpleText), nil
		})

	app.ConfigureMcpTool("test_image_content").
		WithDescription("Returns a 1x1 red PNG image.").
		Handle(func(context.Context, *worker.ToolContext) (*worker.Result, error) {
			return &worker.Result{Content: []worker.Content{worker.Image(redPixelPNG(), "image/png")}}, nil
		})

	app.ConfigureMcpTool("test_audio_content").
		WithDescription("Returns a short silent WAV clip.").
		Handle(func(context.Context, *worker.ToolContext) (*worker.Result, error) {
			return &worker.Result{Content: []worker.Content{worker.Audio(silentWAV(), "audio/wav")}}, nil
		})

	app.ConfigureMcpTool("test_embedded_resource").
		WithDescription("Returns an embedded text resource.").
		Handle(func(context.Context, *worker.ToolContext) (*worker.Result, error) {
			return &worker.Result{Content: []worker.Content{textResource(embeddedURI, "text/plain", embeddedText)}}, nil
		})

	app.ConfigureMcpTool("test_multiple_content_types").
		WithDescription("Returns a text block, an image and an embedded resource.").
		Handle(func(context.Context, *worker.ToolContext) (*worker.Result, error) {
			return &worker.Result{Content: []worker.Content{
				worker.Text(mixedText),
				worker.Image(redPixelPNG(), "image/png"),
				textResource(mixedResourceURI, "application/json", mixedResourceTxt),
			}}, nil
		})

	app.ConfigureMcpTool("test_error_handling").
		WithDescription("Always fails, with an isError result.").
		Handle(func(context.Context, *worker.ToolContext) (*worker.Result, error) {
			return worker.ErrorResult(errorText), nil
		})
}

// textResource is an embedded resource content block with text contents.
func textResource(uri, mimeType, text string) worker.Content {
	type contents struct {
		URI      string `json:"uri"`
		MimeType string `json:"mimeType"`
		Text     string `json:"text"`
	}
	block, err := metadata.Marshal(struct {
		Type     string   `json:"type"`
		Resource contents `json:"resource"`
	}{"resource", contents{uri, mimeType, text}})
	if err != nil { // cannot happen: strings always encode
		panic(err)
	}
	return block
}

// redPixelPNG is a 1x1 red PNG, drawn with the standard library.
func redPixelPNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 0xff, A: 0xff})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil { // cannot happen: in-memory write
		panic(err)
	}
	return buf.Bytes()
}

// silentWAV is 10 ms of 8 kHz, 8-bit mono silence as a RIFF/WAVE file.
func silentWAV() []byte {
	const rate, samples = 8000, 80
	var buf bytes.Buffer
	w := func(v any) { _ = binary.Write(&buf, binary.LittleEndian, v) }
	buf.WriteString("RIFF")
	w(uint32(36 + samples))
	buf.WriteString("WAVEfmt ")
	w(uint32(16))   // fmt chunk size
	w(uint16(1))    // PCM
	w(uint16(1))    // mono
	w(uint32(rate)) // sample rate
	w(uint32(rate)) // byte rate: rate × 1 channel × 1 byte
	w(uint16(1))    // block align
	w(uint16(8))    // bits per sample
	buf.WriteString("data")
	w(uint32(samples))
	buf.Write(bytes.Repeat([]byte{0x80}, samples)) // 8-bit PCM silence is 128
	return buf.Bytes()
}
