#!/bin/sh
# deps.sh - install the Debian packages named as arguments that are missing.
# As root it runs apt-get; otherwise it prints the command and fails.
# On a system without dpkg it only says what it would need.
if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "owt: not a Debian system; make sure these are installed: $*" >&2
	exit 0
fi
missing=
for p in "$@"; do
	case $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) in
	installed) ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
	echo "owt: installing:$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing
	exit $?
fi
echo "owt: missing Debian packages; run:" >&2
echo "  sudo apt-get install -y$missing" >&2
exit 1
