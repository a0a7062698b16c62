// Package config reads what the host is told by the script root: host.json
// (customHandler or the legacy httpWorker section, functionTimeout,
// extensions.mcp; keys match case-insensitively, as the .NET configuration
// binder reads them) and the Values of local.settings.json, into a
// [Config]. Every problem found is an [*Error] naming the file and the key,
// and all of them come back together (errors.Join).
//
// It also holds the rules the Functions host applies to those values: an
// app setting is looked up in the environment, then in local.settings.json
// ([Config.Lookup]); %NAME% is expanded as .NET's
// Environment.ExpandEnvironmentVariables does ([ExpandVars]); a relative
// executable is joined to the app root only when that file exists
// ([ResolveExecutable]); functionTimeout is a .NET TimeSpan
// ([ParseTimeSpan]); a connection is a connection string in the setting
// itself, or identity-based settings <name>__<property> (or
// <name>:<property>) read as the Functions host reads AzureWebJobsStorage
// ([Config.Storage]) and the Functions Redis extension reads its
// connection ([Config.Redis]); a property funchost does not support is
// named in the error, never its value.
package config
