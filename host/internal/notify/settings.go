package notify

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/funcmcp/funcmcp/host/internal/owner"
)

// Lookup reads an app setting: its value ("" when unset) and where it was
// found, for messages (config.Config.Lookup).
type Lookup func(name string) (value, from string)

// LimitsFromSettings reads the limits of a hub from the app settings
// SettingListenersPerClient, SettingListeners, SettingSubscriptions and
// SettingQueue (whole numbers); a setting not set keeps its default.
func LimitsFromSettings(lookup Lookup) (Limits, error) {
	var l Limits
	var perOwner, global, subs, queue int64
	for _, d := range []struct {
		setting string
		dst     *int64
	}{{SettingListenersPerClient, &perOwner}, {SettingListeners, &global}, {SettingSubscriptions, &subs}, {SettingQueue, &queue}} {
		n, err := positive(lookup, d.setting)
		if err != nil {
			return Limits{}, err
		}
		*d.dst = n
	}
	l.Listeners = owner.Limit{PerOwner: perOwner, Global: global}
	l.Subscriptions, l.Queue = int(subs), int(queue)
	return l, nil
}

// PerOwnerFromSetting reads a per-owner bound from the app setting named
// setting (a whole number): the zero Limit, the defaults, when it is not
// set. The legacy sessions with resource subscriptions are bounded so.
func PerOwnerFromSetting(lookup Lookup, setting string) (owner.Limit, error) {
	n, err := positive(lookup, setting)
	if err != nil {
		return owner.Limit{}, err
	}
	return owner.Limit{PerOwner: n}, nil
}

// positive reads a positive whole number of 32 bits: 0 when not set.
func positive(lookup Lookup, setting string) (int64, error) {
	v, from := lookup(setting)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("reading %s from %s: %q is not a positive whole number", setting, from, v)
	}
	return n, nil
}
