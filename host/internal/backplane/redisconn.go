package backplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// RedisEntraScope is the scope of the Microsoft Entra tokens Azure Cache
// for Redis and Azure Managed Redis accept as passwords.
const RedisEntraScope = "https://redis.azure.com/.default"

// RedisConnection says how to reach a Redis server: a connection string,
// or an address with a user name and a token source (Microsoft Entra).
type RedisConnection struct {
	// Name names the connection in messages, e.g. "FUNCMCP_REDIS"; never
	// the secret.
	Name string
	// ConnectionString, when set, is used: "host:port,password=…,ssl=True"
	// as Azure shows it (StackExchange.Redis syntax), or a redis:// or
	// rediss:// URL.
	ConnectionString string
	// Address (host:port), User and Token describe a Microsoft Entra
	// connection: each new connection authenticates as User with a token
	// from Token, over TLS.
	Address string
	User    string
	Token   func(ctx context.Context) (string, error)
	// RootCAs are the authorities trusted for TLS; nil means the system's.
	RootCAs *x509.CertPool
}

// redisTokenLifetime bounds how long a connection authenticated with a
// token is reused: it is replaced (with a fresh token) well before the
// token expires.
const redisTokenLifetime = 20 * time.Minute

// options turns c into go-redis options.
func (c RedisConnection) options() (*redis.Options, error) {
	name := c.Name
	if name == "" {
		name = "the Redis connection"
	}
	var o *redis.Options
	cs := strings.TrimSpace(c.ConnectionString)
	switch {
	case cs != "" && (strings.HasPrefix(cs, "redis://") || strings.HasPrefix(cs, "rediss://")):
		var err error
		if o, err = redis.ParseURL(cs); err != nil {
			return nil, fmt.Errorf("connection %s: %w", name, redactRedisError(err, cs))
		}
	case cs != "":
		var err error
		if o, err = parseRedisConnectionString(cs); err != nil {
			return nil, fmt.Errorf("connection %s: %w", name, err)
		}
	case c.Address != "":
		host, _, err := net.SplitHostPort(c.Address)
		if err != nil {
			return nil, fmt.Errorf("connection %s: address %q: %w", name, c.Address, err)
		}
		if c.Token == nil || c.User == "" {
			return nil, fmt.Errorf("connection %s: an address needs a user and a token source", name)
		}
		token, user := c.Token, c.User
		o = &redis.Options{
			Addr:            c.Address,
			TLSConfig:       &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host, RootCAs: c.RootCAs},
			ConnMaxLifetime: redisTokenLifetime,
			CredentialsProviderContext: func(ctx context.Context) (string, string, error) {
				t, err := token(ctx)
				if err != nil {
					return "", "", fmt.Errorf("getting a Microsoft Entra token for Redis: %w", err)
				}
				return user, t, nil
			},
		}
	default:
		return nil, fmt.Errorf("connection %s is not set", name)
	}
	if o.TLSConfig != nil && c.RootCAs != nil {
		o.TLSConfig.RootCAs = c.RootCAs
	}
	o.DisableIdentity = true // no CLIENT SETINFO: not every server knows it
	// A command ends with its context's deadline (the outcome timeout of
	// a Send), not only after the read timeout and the retries.
	o.ContextTimeoutEnabled = true
	o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	return o, nil
}

// redactRedisError keeps a password out of a URL parse error.
func redactRedisError(err error, cs string) error {
	msg := err.Error()
	if i := strings.Index(cs, "@"); i > 0 {
		msg = strings.ReplaceAll(msg, cs[:i], "redis://…")
	}
	return errors.New(msg)
}

// parseRedisConnectionString reads the StackExchange.Redis syntax Azure
// shows: "host:port,password=…,ssl=True,abortConnect=False". One endpoint;
// the port defaults to 6380 with ssl, else 6379.
func parseRedisConnectionString(cs string) (*redis.Options, error) {
	o := &redis.Options{}
	var endpoints []string
	ssl, sslHost := false, ""
	var errs []error
	for part := range strings.SplitSeq(cs, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, isOpt := strings.Cut(part, "=")
		if !isOpt {
			endpoints = append(endpoints, part)
			continue
		}
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		switch k {
		case "password":
			o.Password = v
		case "user":
			o.Username = v
		case "ssl":
			b, err := strconv.ParseBool(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("ssl=%q is not true or false", v))
			}
			ssl = b
		case "sslhost":
			sslHost = v
		case "defaultdatabase":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				errs = append(errs, fmt.Errorf("defaultDatabase=%q is not a database number", v))
			}
			o.DB = n
		case "connecttimeout":
			ms, err := strconv.Atoi(v)
			if err != nil || ms <= 0 {
				errs = append(errs, fmt.Errorf("connectTimeout=%q is not milliseconds", v))
			}
			o.DialTimeout = time.Duration(ms) * time.Millisecond
		case "name":
			o.ClientName = v
		case "abortconnect", "allowadmin", "synctimeout", "asynctimeout", "connectretry", "keepalive", "sslprotocols":
			// StackExchange.Redis settings without a meaning here.
		default:
			errs = append(errs, fmt.Errorf("option %q is not supported", k))
		}
	}
	switch len(endpoints) {
	case 0:
		errs = append(errs, errors.New("no host:port"))
	case 1:
	default:
		errs = append(errs, fmt.Errorf("%d endpoints: one is supported", len(endpoints)))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	addr := endpoints[0]
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
		port := "6379"
		if ssl {
			port = "6380"
		}
		addr = net.JoinHostPort(addr, port)
	}
	o.Addr = addr
	if ssl {
		if sslHost == "" {
			sslHost = host
		}
		o.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, ServerName: sslHost}
	}
	return o, nil
}
