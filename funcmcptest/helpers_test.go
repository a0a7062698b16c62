package funcmcptest_test

import "os"

func writeFile(name, data string) error { return os.WriteFile(name, []byte(data), 0o600) }
