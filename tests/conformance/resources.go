package main

import (
	"context"
	"fmt"

	"github.com/funcmcp/funcmcp/worker"
)

// The texts and URIs of the suite's resource scenarios (resources.ts).
const (
	staticTextURI    = "test://static-text"
	staticText       = "This is the content of the static text resource."
	staticBinaryURI  = "test://static-binary"
	templateURI      = "test://template/{id}/data"
	watchedURI       = "test://watched-resource"
	watchedText      = "This resource is watched for changes."
	templateJSONText = `{"id":%q,"templateTest":true,"data":"Data for ID: %s"}`
)

// registerResources adds the resources and the template the suite reads
// (resources-list, resources-read-text, resources-read-binary,
// resources-templates-read) and the one it subscribes to
// (resources-subscribe, resources-unsubscribe).
func registerResources(app *worker.App) {
	app.ConfigureMcpResource(staticTextURI).
		WithName("static-text").
		WithDescription("A static text resource.").
		WithMimeType("text/plain").
		Handle(func(context.Context, *worker.ResourceContext) (*worker.ResourceResult, error) {
			return worker.TextResource(staticText), nil
		})

	app.ConfigureMcpResource(staticBinaryURI).
		WithName("static-binary").
		WithDescription("A static binary resource: a 1x1 red PNG.").
		WithMimeType("image/png").
		Handle(func(context.Context, *worker.ResourceContext) (*worker.ResourceResult, error) {
			return worker.BlobResource(redPixelPNG()), nil
		})

	app.ConfigureMcpResource(templateURI).
		WithName("template-data").
		WithDescription("A resource template: the data of one id.").
		WithMimeType("application/json").
		WithCompletion("id", "123", "456", "789").
		Handle(func(_ context.Context, rc *worker.ResourceContext) (*worker.ResourceResult, error) {
			id := rc.Variable("id")
			return worker.TextResource(fmt.Sprintf(templateJSONText, id, id)), nil
		})

	app.ConfigureMcpResource(watchedURI).
		WithName("watched-resource").
		WithDescription("A resource clients subscribe to.").
		WithMimeType("text/plain").
		Handle(func(context.Context, *worker.ResourceContext) (*worker.ResourceResult, error) {
			return worker.TextResource(watchedText), nil
		})
}
