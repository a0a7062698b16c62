package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The connection names of these tests are unusual, so that no variable of
// the machine's environment meets them.
const (
	testStorage = "FuncmcpTestStorage"
	testRedis   = "FuncmcpTestRedis"
)

func TestStorageConnection(t *testing.T) {
	for _, tc := range []struct {
		name   string
		env    map[string]string
		values []Setting
		want   *StorageConnection
		errs   []string
	}{
		{
			name: "a connection string wins",
			env:  map[string]string{testStorage: "UseDevelopmentStorage=true", testStorage + "__accountName": "acct"},
			want: &StorageConnection{Name: testStorage, ConnectionString: "UseDevelopmentStorage=true", From: "environment " + testStorage},
		},
		{
			name:   "from local.settings.json",
			values: []Setting{{testStorage, "UseDevelopmentStorage=true"}},
			want:   &StorageConnection{Name: testStorage, ConnectionString: "UseDevelopmentStorage=true", From: "local.settings.json Values." + testStorage},
		},
		{
			name: "an account name, the default identity",
			env:  map[string]string{testStorage + "__accountName": "myacct"},
			want: &StorageConnection{Name: testStorage, QueueServiceURI: "https://myacct.queue.core.windows.net", BlobServiceURI: "https://myacct.blob.core.windows.net",
				TableServiceURI: "https://myacct.table.core.windows.net",
				From:            "the " + testStorage + "__* settings"},
		},
		{
			name: "service URIs and a user-assigned managed identity, names in any case",
			env: map[string]string{
				testStorage + "__QUEUESERVICEURI": "https://127.0.0.1:1/devstoreaccount1",
				testStorage + "__blobServiceUri":  "https://127.0.0.1:2/devstoreaccount1",
				testStorage + "__tableServiceUri": "https://127.0.0.1:3/devstoreaccount1",
				testStorage + "__credential":      "ManagedIdentity",
				testStorage + "__clientId":        "cid",
			},
			want: &StorageConnection{Name: testStorage, QueueServiceURI: "https://127.0.0.1:1/devstoreaccount1", BlobServiceURI: "https://127.0.0.1:2/devstoreaccount1",
				TableServiceURI: "https://127.0.0.1:3/devstoreaccount1", Identity: Identity{ManagedIdentity: true, ClientID: "cid"}, From: "the " + testStorage + "__* settings"},
		},
		{
			name:   "a colon in local.settings.json, a tenant for the default identity",
			values: []Setting{{testStorage + ":accountName", "myacct"}, {testStorage + ":tenantId", "tid"}},
			want: &StorageConnection{Name: testStorage, QueueServiceURI: "https://myacct.queue.core.windows.net", BlobServiceURI: "https://myacct.blob.core.windows.net",
				TableServiceURI: "https://myacct.table.core.windows.net",
				Identity:        Identity{TenantID: "tid"}, From: "the " + testStorage + "__* settings"},
		},
		{
			name: "nothing set",
			errs: []string{"connection " + testStorage + " is not set"},
		},
		{
			name: "unsupported settings, each named",
			env: map[string]string{
				testStorage + "__accountName":  "myacct",
				testStorage + "__clientSecret": "shh",
				testStorage + "__certificate":  "c",
				testStorage + "__credential":   "clientsecret",
			},
			errs: []string{
				"environment " + testStorage + "__clientSecret) is not supported by funchost",
				testStorage + "__certificate (from environment " + testStorage + "__certificate) is not supported",
				testStorage + `__credential (from environment ` + testStorage + `__credential): "clientsecret" is not supported`,
			},
		},
		{
			name: "no queue endpoint, a plain http one, a bad account",
			env: map[string]string{
				testStorage + "__blobServiceUri": "http://127.0.0.1:2/x",
			},
			errs: []string{"needs " + testStorage + "__accountName or " + testStorage + "__queueServiceUri", `"http://127.0.0.1:2/x" is not an https:// URI`},
		},
		{
			name: "a bad account name, two user-assigned identities, a tenant for a managed identity",
			env: map[string]string{
				testStorage + "__accountName":               "My_Account",
				testStorage + "__credential":                "managedidentity",
				testStorage + "__clientId":                  "a",
				testStorage + "__managedIdentityResourceId": "b",
				testStorage + "__tenantId":                  "t",
			},
			errs: []string{`"My_Account" is not a storage account name`, "name the user-assigned identity once", "a managed identity has no tenant to choose"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			c := &Config{Values: tc.values}
			got, err := c.Storage(testStorage)
			if len(tc.errs) > 0 {
				require.Error(t, err)
				for _, e := range tc.errs {
					assert.Contains(t, err.Error(), e)
				}
				assert.NotContains(t, err.Error(), "shh", "never a secret's value")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestRedisConnection(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want *RedisConnection
		errs []string
	}{
		{
			name: "a connection string",
			env:  map[string]string{testRedis: "cache.redis.cache.windows.net:6380,password=p,ssl=True"},
			want: &RedisConnection{Name: testRedis, ConnectionString: "cache.redis.cache.windows.net:6380,password=p,ssl=True", From: "environment " + testRedis},
		},
		{
			name: "Azure Cache for Redis with a user-assigned identity",
			env:  map[string]string{testRedis + "__redisHostName": "cache.redis.cache.windows.net", testRedis + "__principalId": "oid", testRedis + "__clientId": "cid"},
			want: &RedisConnection{Name: testRedis, Address: "cache.redis.cache.windows.net:6380", PrincipalID: "oid", Identity: Identity{ClientID: "cid"},
				From: "the " + testRedis + "__* settings"},
		},
		{
			name: "Azure Managed Redis",
			env:  map[string]string{testRedis + "__redisHostName": "cache.westeurope.redis.azure.net", testRedis + "__principalId": "oid"},
			want: &RedisConnection{Name: testRedis, Address: "cache.westeurope.redis.azure.net:10000", PrincipalID: "oid", From: "the " + testRedis + "__* settings"},
		},
		{
			name: "a host with its port",
			env:  map[string]string{testRedis + "__redisHostName": "127.0.0.1:6390", testRedis + "__principalId": "oid"},
			want: &RedisConnection{Name: testRedis, Address: "127.0.0.1:6390", PrincipalID: "oid", From: "the " + testRedis + "__* settings"},
		},
		{
			name: "nothing set",
			errs: []string{"connection " + testRedis + " is not set"},
		},
		{
			name: "no principal, a client secret",
			env:  map[string]string{testRedis + "__redisHostName": "h", testRedis + "__clientSecret": "shh"},
			errs: []string{testRedis + "__principalId", testRedis + "__clientSecret (from environment " + testRedis + "__clientSecret) is not supported"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			got, err := (&Config{}).Redis(testRedis)
			if len(tc.errs) > 0 {
				require.Error(t, err)
				for _, e := range tc.errs {
					assert.Contains(t, err.Error(), e)
				}
				assert.NotContains(t, err.Error(), "shh")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
