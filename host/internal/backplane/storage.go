package backplane

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/v2"
)

// DevelopmentStorage is what "UseDevelopmentStorage=true" stands for: the
// storage emulator's well-known account on its default ports.
const DevelopmentStorage = "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;" +
	"AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;" +
	"BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1"

// Storage says how to reach a storage account: a connection string, or
// service URLs with a token credential (an identity-based connection).
type Storage struct {
	// Name names the connection in messages, e.g. "AzureWebJobsStorage";
	// never the secret.
	Name string
	// ConnectionString, when set, is used ("UseDevelopmentStorage=true"
	// means the local emulator).
	ConnectionString string
	// QueueURL and BlobURL are the service endpoints of an identity-based
	// connection; Credential gets its tokens. BlobURL may be "": messages
	// too large for a queue message cannot cross instances then.
	QueueURL, BlobURL string
	Credential        azcore.TokenCredential
	// Transport sends the requests; nil means the default. Tests count
	// requests through it.
	Transport policy.Transporter
}

// storageClients are the services of one storage account.
type storageClients struct {
	queues queueStore
	blobs  blobStore // nil without a blob endpoint
}

func clientOptions(t policy.Transporter) policy.ClientOptions {
	return policy.ClientOptions{
		Retry: policy.RetryOptions{
			MaxRetries:    2,
			TryTimeout:    10 * time.Second,
			RetryDelay:    200 * time.Millisecond,
			MaxRetryDelay: 2 * time.Second,
		},
		Telemetry: policy.TelemetryOptions{Disabled: true},
		Transport: t,
	}
}

// connect makes the clients of s; nothing is contacted.
func (s Storage) connect() (*storageClients, error) {
	name := s.Name
	if name == "" {
		name = "the storage connection"
	}
	qo := &azqueue.ClientOptions{ClientOptions: clientOptions(s.Transport)}
	bo := &azblob.ClientOptions{ClientOptions: clientOptions(s.Transport)}
	cs := strings.TrimSpace(s.ConnectionString)
	if cs != "" {
		if strings.EqualFold(strings.TrimRight(cs, ";"), "UseDevelopmentStorage=true") {
			cs = DevelopmentStorage
		}
		q, err := azqueue.NewServiceClientFromConnectionString(cs, qo)
		if err != nil {
			return nil, fmt.Errorf("connection %s: %w", name, err)
		}
		c := &storageClients{queues: azureQueues{q}}
		// A string naming its queue endpoint but no blob endpoint (a
		// queue-only emulator) has no blobs: the SDK would make one up.
		if hasKey(cs, "BlobEndpoint") || !hasKey(cs, "QueueEndpoint") {
			if b, err := azblob.NewClientFromConnectionString(cs, bo); err == nil {
				c.blobs = azureBlobs{b}
			}
		}
		return c, nil
	}
	if s.QueueURL == "" {
		return nil, fmt.Errorf("connection %s is not set", name)
	}
	if s.Credential == nil {
		return nil, fmt.Errorf("connection %s: no credential for %s", name, s.QueueURL)
	}
	if err := checkServiceURL(s.QueueURL); err != nil {
		return nil, fmt.Errorf("connection %s: queue service %w", name, err)
	}
	q, err := azqueue.NewServiceClient(s.QueueURL, s.Credential, qo)
	if err != nil {
		return nil, fmt.Errorf("connection %s: %w", name, err)
	}
	c := &storageClients{queues: azureQueues{q}}
	if s.BlobURL != "" {
		if err := checkServiceURL(s.BlobURL); err != nil {
			return nil, fmt.Errorf("connection %s: blob service %w", name, err)
		}
		b, err := azblob.NewClient(s.BlobURL, s.Credential, bo)
		if err != nil {
			return nil, fmt.Errorf("connection %s: %w", name, err)
		}
		c.blobs = azureBlobs{b}
	}
	return c, nil
}

// checkServiceURL refuses what a token must never be sent to: a URL that
// is not https.
func checkServiceURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Errorf("URL %q does not parse", s)
	case u.Scheme != "https" || u.Host == "":
		return fmt.Errorf("URL %q is not https://host/…: a token is sent only over TLS", s)
	}
	return nil
}

// hasKey reports whether a connection string has key (case-insensitive).
func hasKey(cs, key string) bool {
	for part := range strings.SplitSeq(cs, ";") {
		k, _, ok := strings.Cut(part, "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), key) {
			return true
		}
	}
	return false
}

// redactedURL drops the query (a SAS) of a service URL.
func redactedURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	u.RawQuery = ""
	return u.String()
}

// shortError keeps the first line of a storage error: azcore's response
// errors run over many lines.
func shortError(err error) error {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		if re.RawResponse != nil && re.RawResponse.Request != nil {
			return fmt.Errorf("%s %s: %d %s", re.RawResponse.Request.Method, redactedURL(re.RawResponse.Request.URL.String()), re.StatusCode, re.ErrorCode)
		}
		return fmt.Errorf("%d %s", re.StatusCode, re.ErrorCode)
	}
	return err
}

// hasCode reports whether err is a storage error with this code.
func hasCode(err error, code string) bool {
	var re *azcore.ResponseError
	return errors.As(err, &re) && re.ErrorCode == code
}
