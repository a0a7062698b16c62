package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/funcmcp/funcmcp/host/internal/backplane"
	"github.com/funcmcp/funcmcp/host/internal/config"
)

// storage reads the app's storage connection (SettingStorage).
func (h *Host) storage() (backplane.Storage, error) {
	sc, err := h.cfg.Storage(SettingStorage)
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

// redis reads the Redis connection of the redis backplane (SettingRedis).
func (h *Host) redis() (backplane.RedisConnection, error) {
	rc, err := h.cfg.Redis(SettingRedis)
	if err != nil {
		return backplane.RedisConnection{}, err
	}
	c := backplane.RedisConnection{Name: SettingRedis, ConnectionString: rc.ConnectionString}
	if rc.ConnectionString != "" {
		return c, nil
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
	c.Address, c.User = rc.Address, rc.PrincipalID
	c.Token = func(ctx context.Context) (string, error) {
		t, err := cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{backplane.RedisEntraScope}})
		return t.Token, err
	}
	return c, nil
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
