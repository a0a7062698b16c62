package obo_test

import (
	"context"
	"os"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/funcmcp/funcmcp/worker"
	"github.com/funcmcp/funcmcp/worker/obo"
)

type MyFilesInput struct{}

type MyFiles struct {
	Token bool `json:"token"`
}

// A tool that calls a downstream API as its caller: the caller's token
// (passed with FUNCMCP_AUTH_PASS_TOKEN=true) is exchanged for one of the
// API, with the app registration's secret.
func Example() {
	app := worker.New(nil)
	//docs:begin obo
	worker.AddTool(app, "my_files", func(ctx context.Context, tc *worker.ToolContext, _ MyFilesInput) (*worker.Result, MyFiles, error) {
		c, err := tc.Caller()
		if err != nil {
			return nil, MyFiles{}, err
		}
		cred, err := obo.NewCredential(c, &obo.Options{
			ClientID:     os.Getenv("AZURE_CLIENT_ID"), // the app registration of the MCP server
			ClientSecret: os.Getenv("AZURE_CLIENT_SECRET"),
		})
		if err != nil {
			return nil, MyFiles{}, err
		}
		// Any Azure SDK client takes cred; here, a token for Microsoft Graph.
		tok, err := cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{"https://graph.microsoft.com/.default"}})
		if err != nil {
			return nil, MyFiles{}, err
		}
		return nil, MyFiles{Token: tok.Token != ""}, nil
	})
	//docs:end obo
}
