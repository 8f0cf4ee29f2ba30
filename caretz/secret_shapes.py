"""The table of secret shapes: what a key, a token, a credential in a URL or a password on a
command line looks like, each a regular expression compiled when first needed (most runs
never check a text). caretz/secrets.py redacts with it and asks it about values; a leaf.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple


class Shape(NamedTuple):
    """A secret recognised by its own shape; group `keep` (if any) stays before [redacted].
    A tuple: this module is on every run's path, and most runs never compile a shape."""

    pattern: re.Pattern[str]
    needs: tuple[str, ...]  # lower-case: the pattern runs only when one of these occurs
    keep: int = 0


_WORD_START = re.compile(r"\\b([A-Za-z0-9_][A-Za-z0-9_\-]*)")


def _shape(pattern: str, *needs: str, keep: int = 0) -> Shape:
    # `\bghp_…` written as `ghp_(?<![A-Za-z0-9_]ghp_)…`: the same match, but the engine
    # finds candidates by searching for the literal instead of trying every position.
    start = _WORD_START.match(pattern)
    if start is not None:
        literal = start.group(1)
        pattern = f"{literal}(?<![A-Za-z0-9_]{literal}){pattern[start.end() :]}"
    return Shape(re.compile(pattern, re.DOTALL), needs, keep)


@functools.cache
def shapes() -> list[Shape]:
    """The shapes, compiled when first needed (about 70 patterns)."""
    return [_shape(pattern, *needs, keep=keep) for pattern, needs, keep in _SHAPE_TABLE]


def _row(pattern: str, *needs: str, keep: int = 0) -> tuple[str, tuple[str, ...], int]:
    return pattern, needs, keep


_SHAPE_TABLE = [
    _row(r"-----BEGIN [A-Z ]*PRIVATE KEY[A-Z ]*-----.*?(?:-----END [A-Z ]*PRIVATE KEY[A-Z ]*-----|\Z)",
           "private key"),
    _row(r"(://[^\s:/@]*:)[^\s@]+(?=@)", "://", keep=1),  # user:password@host (p/ss too)
    _row(r"(https?://)[0-9a-f]{32}(?::[0-9a-f]{32})?(?=@)", "://", keep=1),  # Sentry DSN
    _row(r"(hooks\.slack\.com/services/)[A-Za-z0-9/_\-]+", "hooks.slack", keep=1),
    _row(r"(discord(?:app)?\.com/api/webhooks/[0-9]+/)[A-Za-z0-9_\-]+", "webhooks", keep=1),
    _row(r"([?&]sig=)[A-Za-z0-9%+/=]{10,}", "sig=", keep=1),  # Azure SAS
    _row(r"\bsk-ant-[A-Za-z0-9_\-]{8,}", "sk-ant-"),
    # Not inside a word: `task-runner-abcdefghijklmnop` is no key.
    _row(r"(?<![A-Za-z0-9_\-])sk-(?:proj-|svcacct-|admin-|live_|test_)?[A-Za-z0-9_\-]{16,}",
           "sk-"),
    _row(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}", "k_live_", "k_test_"),
    _row(r"\bwhsec_[A-Za-z0-9]{16,}", "whsec_"),
    _row(r"\bgh[pousr]_[A-Za-z0-9]{16,}", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    _row(r"github_pat_[A-Za-z0-9_]{20,}", "github_pat_"),
    _row(r"\bgl(?:pat|dt|rt|ptt|soat|cbt|imt|ft|ffct|agent|oas|wt)-[A-Za-z0-9_\-]{16,}", "gl"),
    _row(r"\bxox[abprse]-[A-Za-z0-9\-]{10,}", "xox"),
    _row(r"\bxapp-[0-9]-[A-Za-z0-9\-]{16,}", "xapp-"),
    # An AWS credentials CSV (`AKIA…,<secret>`): the secret half goes with the key id.
    _row(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}[ \t]*[,;\t:|][ \t]*[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])",
           "akia", "asia"),
    _row(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", "akia", "asia"),
    _row(r"\bya29\.[0-9A-Za-z_\-]{20,}", "ya29."),  # Google OAuth access token
    _row(r"AIza[0-9A-Za-z_\-]{35}", "aiza"),
    _row(r"\bhf_[A-Za-z0-9]{30,}", "hf_"),
    _row(r"\bnpm_[A-Za-z0-9]{36}", "npm_"),
    _row(r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}", "sg."),
    _row(r"\bSK[0-9a-fA-F]{32}\b", "sk"),  # Twilio
    _row(r"\bkey-[0-9a-zA-Z]{32}\b", "key-"),  # Mailgun
    _row(r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", "shp"),
    _row(r"\bpypi-AgE[A-Za-z0-9_\-]{40,}", "pypi-"),
    _row(r"\bdo[opr]_v1_[a-f0-9]{64}", "_v1_"),
    _row(r"\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}", "glsa_"),  # Grafana
    _row(r"\bdckr_pat_[A-Za-z0-9_\-]{20,}", "dckr_pat_"),
    _row(r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}", "hvs.", "hvb.", "hvr."),  # Vault
    _row(r"\blin_api_[A-Za-z0-9]{32,}", "lin_api_"),
    _row(r"\bATATT[A-Za-z0-9_\-=]{20,}", "atatt"),  # Atlassian
    _row(r"\bfigd_[A-Za-z0-9_\-]{30,}", "figd_"),
    _row(r"\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-.]{30,}", "pscale_"),
    _row(r"\bsntr[ysu]s?_[A-Za-z0-9_\-=+/]{30,}", "sntr"),  # Sentry auth tokens
    _row(r"\bAGE-SECRET-KEY-1[0-9A-Z]{50,}", "age-secret-key-"),
    _row(r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{40,}", "atlasv1"),  # Terraform
    _row(r"\bdp\.(?:st|pt|sa|ct|scim|audit)\.[A-Za-z0-9_\-.]{30,}", "dp."),  # Doppler
    _row(r"\bsq0(?:atp|csp)-[A-Za-z0-9_\-]{22,}", "sq0"),  # Square
    _row(r"\brubygems_[a-f0-9]{48}", "rubygems_"),
    _row(r"\bpul-[a-f0-9]{40}", "pul-"),  # Pulumi
    _row(r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}", "pmak-"),  # Postman
    _row(r"\btskey-[A-Za-z0-9\-]{20,}", "tskey-"),  # Tailscale
    _row(r"\b(?:gsk|xai|pplx|nvapi)[_\-][A-Za-z0-9_\-]{32,}", "gsk_", "xai-", "pplx-",
           "nvapi-"),  # Groq, xAI, Perplexity, NVIDIA
    _row(r"\blsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}", "lsv2_"),  # LangSmith
    _row(r"\bFlyV1 fm[12]_[A-Za-z0-9_\-+/=,]{20,}", "flyv1"),
    _row(r"(\b[0-9]{8,10}:)AA[A-Za-z0-9_\-]{30,}", ":aa", keep=1),  # Telegram bot
    _row(r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", "eyj"),
    _row(r"\bdapi[a-f0-9]{32}(?:-[0-9])?\b", "dapi"),  # Databricks
    _row(r"\br8_[A-Za-z0-9]{37}\b", "r8_"),  # Replicate
    _row(r"\bNR(?:AK|JS|II)-[A-Z0-9]{27}\b", "nrak-", "nrjs-", "nrii-"),  # New Relic
    _row(r"\bsb[ps]_[a-f0-9]{40}\b", "sbp_", "sbs_"),  # Supabase
    _row(r"\bbk(?:ua|ct)_[a-f0-9]{40}\b", "bkua_", "bkct_"),  # Buildkite
    _row(r"\bATBB[A-Za-z0-9_\-=]{28,}", "atbb"),  # Bitbucket app passwords
    _row(r"\bsk\.eyJ[A-Za-z0-9_\-]{20,}\.?[A-Za-z0-9_\-]*", "sk.eyj"),  # Mapbox secret
    _row(r"\b(?:ntn|secret)_[A-Za-z0-9]{43,}", "ntn_", "secret_"),  # Notion
    _row(r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b", "pat"),  # Airtable
    _row(r"\bCFPAT-[A-Za-z0-9_\-]{43}", "cfpat-"),  # Contentful
    _row(r"\bdt0[a-z][0-9]{2}\.[A-Z0-9]{24}\.[A-Z0-9]{64}\b", "dt0"),  # Dynatrace
    _row(r"\bops_eyJ[A-Za-z0-9_\-+/=]{20,}", "ops_eyj"),  # 1Password service accounts
    _row(r"\bLTAI[A-Za-z0-9]{12,20}\b", "ltai"),  # Alibaba Cloud
    _row(r"\bshippo_(?:live|test)_[a-f0-9]{40}\b", "shippo_"),
    _row(r"\b[a-f0-9]{32}-us[0-9]{1,2}\b", "-us"),  # Mailchimp
    _row(r"\bHRKU-[A-Za-z0-9_\-]{20,}", "hrku-"),  # Heroku
    _row(r"\b1//0[A-Za-z0-9_\-]{40,}", "1//0"),  # Google OAuth refresh token
    _row(r"\bsq[uapb]_[a-f0-9]{40}\b", "squ_", "sqa_", "sqp_", "sqb_"),  # SonarQube
    _row(r"\bxoxe\.xox[a-z]-[A-Za-z0-9\-]{20,}", "xoxe."),  # Slack refresh tokens
    _row(r"\bM[A-Za-z0-9]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}\b", "."),  # Discord bot
    # AWS session tokens (STS): their base64 starts the same way.
    _row(r"\b(?:FwoGZXIvYXdz|IQoJb3JpZ2lu)[A-Za-z0-9/+=]{40,}", "fwogzxivyxdz", "iqojb3jpz2lu"),
    _row(r"(Private-Lines:[ \t]*[0-9]+[ \t]*\n)[A-Za-z0-9+/=\n]+", "private-lines", keep=1),  # PuTTY
    # Passwords given on a command line.
    _row(r"(\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mariadb)\b[^\n|;&]*?\s-p)(?=[^\s-])\S+",
           "mysql", "mariadb", keep=1),
    _row(r"(\b(?:sshpass|login)\b[^\n|;&]*?\s-p\s*)['\"]?[^\s'\"$]+['\"]?", "sshpass", "login",
           keep=1),
    _row(r"(\bhtpasswd\b(?:\s+-[a-zA-Z]+)*\s+-[a-zA-Z]*b[a-zA-Z]*(?:\s+-[a-zA-Z]+)*"
           r"(?:\s+(?!-)\S+){1,2}?\s+(?!-)(?:\S+\s+)?)['\"]?[^\s'\"$]+['\"]?(?=\s*(?:$|[\n|;&]))",
           "htpasswd", keep=1),
    _row(r"(\bredis-cli\b[^\n|;&]*?\s(?:-a|--pass)\s+)['\"]?[^\s'\"$]+['\"]?", "redis-cli",
           keep=1),
    _row(r"(\bmongo(?:sh|dump|restore|export|import|stat|top)?\b[^\n|;&]*?\s-p\s*)"
           r"['\"]?[^\s'\"$-][^\s'\"]*['\"]?", "mongo", keep=1),
    _row(r"(\bldap[a-z]+\b[^\n|;&]*?\s-w\s*)['\"]?[^\s'\"$]+['\"]?", "ldap", keep=1),
    _row(r"(\s-U\s*['\"]?[^\s%'\"]+%)[^\s'\"]+", "%", keep=1),  # smbclient -U user%pass
    _row(r"(\b(?:zip|unzip|zipcloak)\b[^\n|;&]*?\s-P\s*)['\"]?[^\s'\"$]+['\"]?", "zip", keep=1),
    _row(r"(\b(?:7z|7za|7zr|rar|unrar)\b[^\n|;&]*?\s-p)['\"]?[^\s'\"$]+['\"]?", "7z", "rar",
           keep=1),
    _row(r"(\b(?:sqlcmd|bcp|osql|isql|sqlplus)\b[^\n|;&]*?\s-P\s*)['\"]?[^\s'\"$]+['\"]?",
           "sqlcmd", "bcp", "osql", "isql", "sqlplus", keep=1),
    _row(r"(\bopenssl\b[^\n|;&]*?\s-k\s+)['\"]?[^\s'\"$]+['\"]?", "openssl", keep=1),
    _row(r"(\s-(?:storepass|keypass|srcstorepass|deststorepass|srckeypass|destkeypass)\s+)"
           r"['\"]?[^\s'\"$]+['\"]?", "pass ", keep=1),  # keytool
    _row(r"(\bssh-keygen\b[^\n|;&]*?\s-[NP]\s*)(?:'[^'\n]+'|\"[^\"\n]+\"|[^\s'\"$-]\S*)",
           "ssh-keygen", keep=1),
    _row(r"(\bmachine\s+\S+\s+(?:login\s+\S+\s+)?password\s+)\S+", "machine", keep=1),  # .netrc
    _row(r"(\bcurl\b[^\n|;&]*?\s(?:-u|--user)[ =]?['\"]?[^\s:'\"]+:)[^\s'\"]+", "curl", keep=1),
    # `-u user,password` (lftp), `-a user:password` (httpie), `-passin pass:…` (openssl).
    _row(r"(\s-u[ \t]+['\"]?[^\s,'\"]+,)[^\s'\"]+", "-u", keep=1),
    _row(r"(\s(?:-a|--auth)[ =]['\"]?[^\s:'\"/]+:)[^\s'\"@]+(?=['\"]?(?:\s|$))", "-a", "--auth",
           keep=1),
    _row(r"(\s-pass(?:in|out)?[ \t]+['\"]?pass:)[^\s'\"]+", "pass:", keep=1),
    # `user/password@db` for Oracle's tools; `add_user NAME PASSWORD` (rabbitmqctl).
    _row(r"(\b(?:sqlplus|rman|expdp|impdp|sqlldr|exp|imp)\b(?:[ \t]+-\S+)*[ \t]+['\"]?[^\s/'\"@]+/)"
           r"[^\s@'\"]+", "sqlplus", "rman", "expdp", "impdp", "sqlldr", "exp", "imp", keep=1),
    _row(r"(\brabbitmqctl\b[^\n|;&]*?\s(?:add_user|change_password)[ \t]+\S+[ \t]+)['\"]?[^\s'\"]+",
           "rabbitmqctl", keep=1),
    _row(r"(\s/user:\S+[ \t]+)(?![/-])['\"]?[^\s'\"]+", "/user:", keep=1),  # net use
    # `-password VALUE` with one dash (influx, many Java tools).
    _row(r"(\s-(?:password|passwd|passphrase|pwd)[ =])(?!['\"]?\$)['\"]?[^\s'\"]+", "pass", "pwd",
           keep=1),
    # --password=…, --http-password …, --db-passwd, --passphrase, --auth-token; not a
    # --password-file or --token-stdin, and not a `$VAR` the shell fills in.
    _row(r"(--(?:[a-z]+-)*(?:password|passwd|passphrase|pass|token|api-key|apikey|secret|"
           r"client-secret|private-key)[ =])(?!['\"]?\$)['\"]?[^\s'\"]+['\"]?",
           "pass", "--", keep=1),
    # A kubeconfig's client key, a docker config's `"auth": "<base64 user:password>"`.
    _row(r"(\bclient-key-data:[ \t]*['\"]?)[A-Za-z0-9+/=]{16,}", "client-key-data", keep=1),
    # .npmrc's `_auth` and `_password` (base64), a .pgpass line's last field, a cookie set.
    _row(r"((?:^|[\s:])_(?:auth|password)[ \t]*=[ \t]*)\S+", "_auth", "_password", keep=1),
    _row(r"(?m)(?<!\S)([^\s:#]+:(?:[0-9]+|\*):[^\s:]+:[^\s:]+:)\S+$", ":", keep=1),
    _row(r"(\bSet-Cookie:[ \t]*[^=;\s]+=)[^;\s]+", "set-cookie", keep=1),
    _row(r"(\"auth\"[ \t]*:[ \t]*\")(?=[A-Za-z0-9+/=]*[0-9A-Z+/=])[A-Za-z0-9+/]{12,}={0,2}(?=\")",
           '"auth"', keep=1),
]  # fmt: skip
