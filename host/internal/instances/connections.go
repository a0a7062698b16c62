package instances

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/funcmcp/funcmcp/host/internal/backplane"
	"github.com/funcmcp/funcmcp/host/internal/config"
	"github.com/funcmcp/funcmcp/host/internal/tasks"
)

// Connections builds the app's connections to Azure Storage and Redis from
// its settings: a connection string, or the endpoints of an identity-based
// connection with its Microsoft Entra credential.
type Connections struct{ cfg *config.Config }

// NewConnections returns the connections the settings of cfg describe;
// nothing is read before one is asked for.
func NewConnections(cfg *config.Config) *Connections { return &Connections{cfg: cfg} }

// Storage reads the app's storage connection (SettingStorage) for the
// backplane's queues and blobs.
func (c *Connections) Storage() (backplane.Storage, error) {
	sc, err := c.cfg.Storage(SettingStorage)
	if err != nil {
		return backplane.Storage{}, err
	}
	st := backplane.Storage{Name: SettingStorage, ConnectionString: sc.ConnectionString}
	if sc.ConnectionString != "" {
		return st, nil
	}
	cred, err := tokenCredential(SettingStorage, sc.Identity)
	if err != nil {
		return backplane.Storage{}, err
	}
	st.QueueURL, st.BlobURL, st.Credential = sc.QueueServiceURI, sc.BlobServiceURI, cred
	return st, nil
}

// Redis reads the Redis connection of the redis backplane (SettingRedis).
func (c *Connections) Redis() (backplane.RedisConnection, error) {
	rc, err := c.cfg.Redis(SettingRedis)
	if err != nil {
		return backplane.RedisConnection{}, err
	}
	conn := backplane.RedisConnection{Name: SettingRedis, ConnectionString: rc.ConnectionString}
	if rc.ConnectionString != "" {
		return conn, nil
	}
	// As the Functions Redis extension reads it, __clientId alone names a
	// user-assigned managed identity.
	id := rc.Identity
	if id.ClientID != "" || id.ResourceID != "" {
		id.ManagedIdentity = true
	}
	cred, err := tokenCredential(SettingRedis, id)
	if err != nil {
		return backplane.RedisConnection{}, err
	}
	conn.Address, conn.User = rc.Address, rc.PrincipalID
	conn.Token = func(ctx context.Context) (string, error) {
		t, err := cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{backplane.RedisEntraScope}})
		return t.Token, err
	}
	return conn, nil
}

// Tables reads the storage connection (SettingStorage) of the Azure
// tables: a connection string, or the endpoints (the blob endpoint too
// when blobs) and credential of an identity-based connection.
func (c *Connections) Tables(blobs bool) (string, *tasks.AzureOptions, error) {
	sc, err := c.cfg.Storage(SettingStorage)
	if err != nil {
		return "", nil, err
	}
	ao := &tasks.AzureOptions{TableURL: sc.TableServiceURI, BlobURL: sc.BlobServiceURI}
	if sc.ConnectionString != "" {
		return sc.ConnectionString, ao, nil
	}
	if sc.TableServiceURI == "" || (blobs && sc.BlobServiceURI == "") {
		need := "__tableServiceUri"
		if blobs {
			need = "__tableServiceUri and " + SettingStorage + "__blobServiceUri"
		}
		return "", nil, fmt.Errorf("the identity-based connection %s needs %s__accountName, or %s%s", SettingStorage, SettingStorage, SettingStorage, need)
	}
	if ao.Credential, err = tokenCredential(SettingStorage, sc.Identity); err != nil {
		return "", nil, err
	}
	return "", ao, nil
}

// hasTables reports whether a storage connection string reaches the
// account's tables: it names a table endpoint, or no endpoint at all (the
// account's are derived from its name), or the local emulator.
func hasTables(cs string) bool {
	endpoints := false
	for part := range strings.SplitSeq(cs, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k = strings.ToLower(strings.TrimSpace(k)); {
		case k == "tableendpoint":
			return true
		case k == "usedevelopmentstorage" && strings.EqualFold(strings.TrimSpace(v), "true"):
			return true
		case strings.HasSuffix(k, "endpoint"):
			endpoints = true
		}
	}
	return !endpoints
}

// tokenCredential is the Microsoft Entra credential of an identity-based
// connection, as the Functions host chooses it: the machine's managed
// identity with __credential=managedidentity (the user-assigned one that
// __clientId or __managedIdentityResourceId names), else the developer's
// or environment's identity.
func tokenCredential(conn string, id config.Identity) (azcore.TokenCredential, error) {
	if id.ManagedIdentity {
		o := &azidentity.ManagedIdentityCredentialOptions{}
		switch {
		case id.ClientID != "":
			o.ID = azidentity.ClientID(id.ClientID)
		case id.ResourceID != "":
			o.ID = azidentity.ResourceID(id.ResourceID)
		}
		cred, err := azidentity.NewManagedIdentityCredential(o)
		if err != nil {
			return nil, fmt.Errorf("connection %s: the managed identity: %w", conn, err)
		}
		return cred, nil
	}
	if id.ClientID != "" || id.ResourceID != "" {
		return nil, errors.New("connection " + conn + ": a user-assigned identity (" + conn + "__clientId or __managedIdentityResourceId) needs " + conn + "__credential=managedidentity")
	}
	cred, err := azidentity.NewDefaultAzureCredential(&azidentity.DefaultAzureCredentialOptions{TenantID: id.TenantID})
	if err != nil {
		return nil, fmt.Errorf("connection %s: the default identity: %w", conn, err)
	}
	return cred, nil
}
