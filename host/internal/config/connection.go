package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"sort"
	"strings"
)

// Property is one <connection>__<property> app setting.
type Property struct {
	Key   string // the setting's name as written, e.g. "AzureWebJobsStorage__accountName"
	Value string
	From  string // where it was found, for messages; never the value
}

// properties returns the <name>__<property> (or <name>:<property>)
// settings, by lower-case property: the environment first, then
// local.settings.json Values. Names match case-insensitively, as the
// Functions host's configuration does.
func (c *Config) properties(name string) map[string]Property {
	out := map[string]Property{}
	add := func(key, value, from string) {
		for _, sep := range []string{"__", ":"} {
			p := name + sep
			if len(key) > len(p) && strings.EqualFold(key[:len(p)], p) && value != "" {
				prop := strings.ToLower(key[len(p):])
				if _, ok := out[prop]; !ok {
					out[prop] = Property{Key: key, Value: value, From: from}
				}
			}
		}
	}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			add(k, v, "environment "+k)
		}
	}
	for _, s := range c.Values {
		add(s.Key, s.Value, LocalSettingsFile+" Values."+s.Key)
	}
	return out
}

// Identity says which Microsoft Entra identity gets the tokens of an
// identity-based connection.
type Identity struct {
	// ManagedIdentity is set by <connection>__credential=managedidentity:
	// the managed identity of the machine (system-assigned, or the
	// user-assigned one ClientID or ResourceID names). Without it the
	// developer's or environment's identity is used (environment
	// variables, workload identity, managed identity, Azure CLI, Azure
	// Developer CLI, in this order).
	ManagedIdentity bool
	// ClientID is <connection>__clientId: the user-assigned identity.
	ClientID string
	// ResourceID is <connection>__managedIdentityResourceId.
	ResourceID string
	// TenantID is <connection>__tenantId (not with a managed identity).
	TenantID string
}

// Names of identity properties, lower case.
const (
	propCredential = "credential"
	propClientID   = "clientid"
	propResourceID = "managedidentityresourceid"
	propTenantID   = "tenantid"
)

// identity reads the identity properties of a connection.
func identity(props map[string]Property) (Identity, error) {
	var id Identity
	var errs []error
	if p, ok := props[propCredential]; ok {
		if !strings.EqualFold(strings.TrimSpace(p.Value), "managedidentity") {
			errs = append(errs, fmt.Errorf("%s (from %s): %q is not supported: the only credential is managedidentity", p.Key, p.From, p.Value))
		}
		id.ManagedIdentity = true
	}
	id.ClientID = strings.TrimSpace(props[propClientID].Value)
	id.ResourceID = strings.TrimSpace(props[propResourceID].Value)
	id.TenantID = strings.TrimSpace(props[propTenantID].Value)
	if id.ClientID != "" && id.ResourceID != "" {
		errs = append(errs, fmt.Errorf("%s and %s: name the user-assigned identity once", props[propClientID].Key, props[propResourceID].Key))
	}
	if id.ManagedIdentity && id.TenantID != "" {
		errs = append(errs, fmt.Errorf("%s (from %s): a managed identity has no tenant to choose", props[propTenantID].Key, props[propTenantID].From))
	}
	return id, errors.Join(errs...)
}

// unsupported names the properties of a connection outside known.
func unsupported(props map[string]Property, known ...string) error {
	var errs []error
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ok := false
		for _, n := range known {
			if strings.EqualFold(k, n) {
				ok = true
			}
		}
		if !ok {
			p := props[k]
			errs = append(errs, fmt.Errorf("%s (from %s) is not supported by funchost", p.Key, p.From))
		}
	}
	return errors.Join(errs...)
}

// StorageConnection is a storage account connection as the Functions host
// reads AzureWebJobsStorage: a connection string in the setting itself, or
// an identity-based connection in <name>__accountName,
// __queueServiceUri, __blobServiceUri, __tableServiceUri, __credential, __clientId,
// __managedIdentityResourceId and __tenantId.
type StorageConnection struct {
	Name string
	// ConnectionString is the setting's value; "" for an identity-based
	// connection.
	ConnectionString string
	// QueueServiceURI, BlobServiceURI and TableServiceURI are the
	// endpoints of an identity-based connection (from __accountName, or
	// given).
	QueueServiceURI, BlobServiceURI, TableServiceURI string
	Identity                                         Identity
	// From says where the connection was found, for messages.
	From string
}

// Storage reads the storage connection name. Every problem is returned,
// joined: an unset connection, an unsupported property, a bad URI.
func (c *Config) Storage(name string) (*StorageConnection, error) {
	if v, from := c.Lookup(name); v != "" {
		return &StorageConnection{Name: name, ConnectionString: v, From: from}, nil
	}
	props := c.properties(name)
	if len(props) == 0 {
		return nil, fmt.Errorf("connection %s is not set (a connection string, or %s__accountName or %s__queueServiceUri for an identity)", name, name, name)
	}
	sc := &StorageConnection{Name: name, From: "the " + name + "__* settings"}
	errs := []error{unsupported(props, "accountname", "queueserviceuri", "blobserviceuri", "tableserviceuri",
		propCredential, propClientID, propResourceID, propTenantID)}
	id, err := identity(props)
	sc.Identity = id
	errs = append(errs, err)
	if p, ok := props["accountname"]; ok {
		acct := strings.TrimSpace(p.Value)
		if !validAccountName(acct) {
			errs = append(errs, fmt.Errorf("%s (from %s): %q is not a storage account name (3-24 lower-case letters and digits)", p.Key, p.From, acct))
		}
		sc.QueueServiceURI = "https://" + acct + ".queue.core.windows.net"
		sc.BlobServiceURI = "https://" + acct + ".blob.core.windows.net"
		sc.TableServiceURI = "https://" + acct + ".table.core.windows.net"
	}
	for prop, dst := range map[string]*string{"queueserviceuri": &sc.QueueServiceURI, "blobserviceuri": &sc.BlobServiceURI,
		"tableserviceuri": &sc.TableServiceURI} {
		p, ok := props[prop]
		if !ok {
			continue
		}
		if err := checkHTTPS(p.Value); err != nil {
			errs = append(errs, fmt.Errorf("%s (from %s): %w", p.Key, p.From, err))
		}
		*dst = strings.TrimSpace(p.Value)
	}
	if sc.QueueServiceURI == "" {
		errs = append(errs, fmt.Errorf("connection %s: an identity-based connection needs %s__accountName or %s__queueServiceUri", name, name, name))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return sc, nil
}

func validAccountName(s string) bool {
	if len(s) < 3 || len(s) > 24 {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

func checkHTTPS(s string) error {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("%q is not an https:// URI: a token is sent only over TLS", s)
	}
	return nil
}

// RedisConnection is a Redis connection as the Azure Functions Redis
// extension reads one: a connection string in the setting itself
// ("host:port,password=…,ssl=True", or a redis:// or rediss:// URL), or a
// Microsoft Entra connection in <name>__redisHostName, __principalId (the
// identity's object id, the Redis user name) and __clientId.
type RedisConnection struct {
	Name string
	// ConnectionString is the setting's value; "" for an identity.
	ConnectionString string
	// Address is host:port of an identity-based connection: port 10000
	// for Azure Managed Redis (*.redis.azure.net), else 6380, unless
	// __redisHostName names one. It is always reached over TLS.
	Address string
	// PrincipalID is the user name of an identity-based connection.
	PrincipalID string
	Identity    Identity
	From        string
}

// Redis reads the Redis connection name.
func (c *Config) Redis(name string) (*RedisConnection, error) {
	if v, from := c.Lookup(name); v != "" {
		return &RedisConnection{Name: name, ConnectionString: v, From: from}, nil
	}
	props := c.properties(name)
	if len(props) == 0 {
		return nil, fmt.Errorf("connection %s is not set (a connection string, or %s__redisHostName and %s__principalId for an identity)", name, name, name)
	}
	rc := &RedisConnection{Name: name, From: "the " + name + "__* settings"}
	errs := []error{unsupported(props, "redishostname", "principalid", propCredential, propClientID, propResourceID, propTenantID)}
	id, err := identity(props)
	rc.Identity = id
	errs = append(errs, err)
	host := strings.TrimSpace(props["redishostname"].Value)
	switch {
	case host == "":
		errs = append(errs, fmt.Errorf("connection %s: an identity-based connection needs %s__redisHostName", name, name))
	case strings.Contains(host, ":"):
		if _, _, err := net.SplitHostPort(host); err != nil {
			errs = append(errs, fmt.Errorf("%s: %q is not host or host:port", props["redishostname"].Key, host))
		}
		rc.Address = host
	case strings.HasSuffix(strings.ToLower(host), ".redis.azure.net"):
		rc.Address = net.JoinHostPort(host, "10000")
	default:
		rc.Address = net.JoinHostPort(host, "6380")
	}
	rc.PrincipalID = strings.TrimSpace(props["principalid"].Value)
	if rc.PrincipalID == "" {
		errs = append(errs, fmt.Errorf("connection %s: an identity-based connection needs %s__principalId (the identity's object id, its Redis user name)", name, name))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return rc, nil
}
