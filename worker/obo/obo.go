// Package obo gives a tool an azcore.TokenCredential that acts on behalf of
// the tool's caller (the OAuth 2.0 on-behalf-of flow of Microsoft Entra ID),
// for calls to downstream APIs (Microsoft Graph, Azure Storage, your own
// APIs) with the caller's rights rather than the app's.
//
// The credential exchanges the caller's access token, which the host passes
// only when the app opts in (funchost: FUNCMCP_AUTH_PASS_TOKEN=true; the
// Azure Functions host: App Service authentication's token store), for a
// token of the downstream API, with azidentity's OnBehalfOfCredential and
// the app registration's own credential (a client secret, a certificate or
// a client assertion such as a managed identity's federated token):
//
//	c, err := tc.Caller()
//	if err != nil {
//		return nil, err
//	}
//	cred, err := obo.NewCredential(c, &obo.Options{ClientID: os.Getenv("AZURE_CLIENT_ID"),
//		ClientSecret: os.Getenv("AZURE_CLIENT_SECRET")})
//	if err != nil {
//		return nil, err
//	}
//	client, err := azblob.NewClient(url, cred, nil)
//
// It is a package of its own so that apps that do not import it do not link
// azidentity.
package obo

import (
	"context"
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/funcmcp/funcmcp/worker"
)

// ErrNoAccessToken is returned when the host passed no access token of the
// caller: the app did not opt in.
var ErrNoAccessToken = errors.New("the host passed no access token of the caller: set FUNCMCP_AUTH_PASS_TOKEN=true under funchost, " +
	"or enable the token store of App Service authentication under the Azure Functions host")

// Options are the app registration's identity: the application the
// caller's token was issued to, which asks for the downstream token.
type Options struct {
	// TenantID is the tenant of the token request; "" takes the caller's
	// (the tid claim), as a multi-tenant app does.
	TenantID string
	// ClientID is the application (client) id of the app registration.
	ClientID string

	// The app's own credential: exactly one of ClientSecret,
	// Certificates with PrivateKey, or ClientAssertion.
	ClientSecret string
	Certificates []*x509.Certificate
	PrivateKey   crypto.PrivateKey
	// ClientAssertion returns a client assertion (a JWT), for example a
	// managed identity's token for api://AzureADTokenExchange when the app
	// registration trusts it through a federated credential.
	ClientAssertion func(context.Context) (string, error)

	// Credential are azidentity's options: the cloud (its authority host),
	// the HTTP transport, the additionally allowed tenants. Nil: the
	// defaults (Azure public cloud).
	Credential *azidentity.OnBehalfOfCredentialOptions
}

// OptionsError is an Options that cannot make a credential.
type OptionsError struct{ Problem string }

func (e *OptionsError) Error() string { return "on-behalf-of options: " + e.Problem }

// NewCredential returns a credential that gets tokens for the caller c
// from Microsoft Entra ID by the on-behalf-of flow, with the app's
// identity in o. It returns ErrNoAccessToken when the host passed no
// access token, and an *OptionsError when o is incomplete.
func NewCredential(c *worker.Caller, o *Options) (azcore.TokenCredential, error) {
	if c == nil || c.AccessToken == "" {
		return nil, ErrNoAccessToken
	}
	if o == nil || o.ClientID == "" {
		return nil, &OptionsError{"ClientID (the app registration's application id) is required"}
	}
	tenant := o.TenantID
	if tenant == "" {
		tenant = c.TenantID
	}
	if tenant == "" {
		return nil, &OptionsError{"TenantID is required when the caller's token names no tenant (tid)"}
	}
	n := 0
	if o.ClientSecret != "" {
		n++
	}
	if len(o.Certificates) > 0 || o.PrivateKey != nil {
		n++
	}
	if o.ClientAssertion != nil {
		n++
	}
	if n != 1 {
		return nil, &OptionsError{fmt.Sprintf("exactly one of ClientSecret, Certificates with PrivateKey, ClientAssertion is required (%d given)", n)}
	}
	var cred azcore.TokenCredential
	var err error
	switch {
	case o.ClientSecret != "":
		cred, err = azidentity.NewOnBehalfOfCredentialWithSecret(tenant, o.ClientID, c.AccessToken, o.ClientSecret, o.Credential)
	case o.ClientAssertion != nil:
		cred, err = azidentity.NewOnBehalfOfCredentialWithClientAssertions(tenant, o.ClientID, c.AccessToken, o.ClientAssertion, o.Credential)
	default:
		if len(o.Certificates) == 0 || o.PrivateKey == nil {
			return nil, &OptionsError{"Certificates and PrivateKey go together"}
		}
		cred, err = azidentity.NewOnBehalfOfCredentialWithCertificate(tenant, o.ClientID, c.AccessToken, o.Certificates, o.PrivateKey, o.Credential)
	}
	if err != nil {
		return nil, fmt.Errorf("making the on-behalf-of credential: %w", err)
	}
	return cred, nil
}
