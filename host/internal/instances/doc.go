// Package instances is what the instances of one app share and how they
// reach each other, as the app settings say:
//
//   - [Legacy]: the backplane the settings choose (memory, Azure Storage
//     queues or Redis), and over it the legacy SSE traffic of streams on
//     other instances, the clients' responses to requests of calls waiting
//     on other instances (their ids sealed, checked before any storage
//     request) and the relay of the changes listeners hear;
//   - [Stores]: the store of MCP task records (memory or Azure Storage) and
//     the record of used input-required request states (Redis or Azure
//     Tables), and their sweeping;
//   - [Connections]: the app's connections to Azure Storage and Redis,
//     connection strings or identity-based, with their Microsoft Entra
//     credential.
//
// Each is made with what it needs (the configuration, the logger, the
// sealer, the telemetry); the host composes them.
package instances
