"""A second, larger set of secrets as they turn up in a session, and of what only looks like one.

Written apart from tests/secret_cases.py (the table's own cases) to measure the table and
the detector beside it on text neither was written against: command lines, config files,
URLs with credentials, environment variables, and tokens of many vendors, each in the
setting it is met in; and the output of git, lock files, test runs and build tools that
carries hashes, UUIDs and base64 that must reach the judge as they are.

The values are made here from a seeded generator: random in shape (so that no detector
passes them over as a placeholder or a run like "abcdef"), the same on every run, and no
real credential is ever stored.
"""

from __future__ import annotations

import base64
import random
import string

_ALNUM = string.ascii_letters + string.digits
_HEX = "0123456789abcdef"
_B64 = _ALNUM + "+/"
_URLSAFE = _ALNUM + "-_"


def _r(tag: str, size: int, alphabet: str = _ALNUM) -> str:
    """`size` characters of `alphabet`, the same for the same tag on every run."""
    pick = random.Random(tag)
    return "".join(pick.choice(alphabet) for _ in range(size))


def _pw(tag: str) -> str:
    """A password as people choose them: letters, digits and a sign or two."""
    pick = random.Random(tag)
    word = pick.choice(["Tr0ub4dor", "Sunfl0wer", "Blu3Whale", "Qu4rtz", "M4pleLeaf", "R1verStone"])
    return f"{word}{pick.randint(10, 99)}{pick.choice('!#%*+')}{_r(tag + 'x', 3)}"


_JWT = (
    ".".join(
        base64.urlsafe_b64encode(part.encode()).decode().rstrip("=")
        for part in ('{"alg":"RS256","typ":"JWT"}', '{"sub":"deploy-bot","iat":1733011200}')
    )
    + "."
    + _r("jwt-sig", 43, _URLSAFE)
)

# (text, the secret in it): each text as it would stand in a command, a file or an output.
SECRETS: list[tuple[str, str]] = [
    # -- passwords on command lines ------------------------------------------------------------
    (f"cqlsh -u cassandra -p {(p := _pw('cqlsh'))} cass1.internal 9042", p),
    (f"lftp -u deploy,{(p := _pw('lftp'))} sftp://files.example.com", p),
    (f"influx -username admin -password {(p := _pw('influx'))} -execute 'SHOW DATABASES'", p),
    (f"az login --service-principal -u app-id -p {(p := _pw('az'))} --tenant contoso", p),
    (f"openssl pkcs12 -in cert.p12 -passin pass:{(p := _pw('openssl'))} -nokeys", p),
    (f"sqlplus scott/{(p := _pw('sqlplus'))}@orcl @report.sql", p),
    (f"ncftpput -u ftpuser -p {(p := _pw('ncftp'))} ftp.example.com /in data.csv", p),
    (
        f"kubectl create secret generic db --from-literal=password={(p := _pw('kubectl'))}",
        p,
    ),
    (f"rabbitmqctl add_user deployer {(p := _pw('rabbit'))}", p),
    (f"net use \\\\fs01\\share /user:CORP\\ann {(p := _pw('netuse'))}", p),
    (f"docker run -e POSTGRES_PASSWORD={(p := _pw('docker-e'))} postgres:16", p),
    (f"mysqladmin -uroot -p{(p := _pw('mysqladmin'))} status", p),
    # -- config files ----------------------------------------------------------------------------
    (f"_auth={(v := base64.b64encode(('ann:' + _pw('npmrc')).encode()).decode())}", v),
    (f"//npm.pkg.github.com/:_authToken={(v := 'ghp_' + _r('npmrc-gh', 36))}", v),
    (
        f"[pypi]\nusername = __token__\npassword = {(v := 'pypi-AgEIcHlwaS5vcmc' + _r('pypirc', 64, _URLSAFE))}",
        v,
    ),
    (f"define('DB_PASSWORD', '{(p := _pw('wp'))}');", p),
    (
        f"<server><id>central</id><username>ann</username><password>{(p := _pw('m2'))}</password></server>",
        p,
    ),
    (f"ossrhPassword={(p := _pw('gradle'))}", p),
    (f'db_password = "{(p := _pw("tfvars"))}"', p),
    (f"spring:\n  datasource:\n    password: {(p := _pw('spring'))}", p),
    (
        f'"ConnectionStrings": {{"Db": "Server=sql1;Database=shop;User Id=sa;Password={(p := _pw("mssql"))};"}}',
        p,
    ),
    (
        f"[default]\naws_access_key_id = AKIA{_r('aws-id', 16, string.ascii_uppercase + '234567')}\naws_secret_access_key = {(v := _r('aws-secret', 40, _B64))}",
        v,
    ),
    (f"secret_key = {(v := _r('s3cfg', 40, _B64))}", v),
    (
        f"apiVersion: v1\nkind: Secret\ndata:\n  password: {(v := base64.b64encode(_pw('k8s').encode()).decode())}",
        v,
    ),
    (f"SECRET_KEY = 'django-insecure-{(v := _r('django', 50, _ALNUM + '!@#%^&*(-_=+)'))}'", v),
    (f"db01.internal:5432:shop:app:{(p := _pw('pgpass'))}", p),
    (f'token = "{(v := _r("toml-token", 40))}"', v),
    # -- URLs with credentials -------------------------------------------------------------------
    (f"amqp://celery:{(p := _pw('amqp'))}@rabbit.internal:5672//", p),
    (f"jdbc:mysql://db:3306/shop?user=root&password={(p := _pw('jdbc'))}", p),
    (f"curl 'https://api.example.com/v2/items?api_key={(v := _r('apikey-q', 32, _HEX))}'", v),
    (f"https://x-access-token:{(v := 'ghs_' + _r('ghs-url', 36))}@github.com/org/app.git", v),
    (f"mongodb+srv://reporting:{(p := _pw('srv'))}@cluster0.ab1cd.mongodb.net/shop", p),
    (
        f"pip install --index-url https://__token__:{(p := _r('gl-pip', 20, _URLSAFE))}@gitlab.example.com/api/v4/projects/7/packages/pypi/simple app",
        p,
    ),
    (
        f"https://s3.amazonaws.com/b/k?X-Amz-Security-Token={(v := _r('amz-sts', 120, _B64))}&X-Amz-Expires=300",
        v,
    ),
    # -- HTTP headers ----------------------------------------------------------------------------
    (f"Set-Cookie: sessionid={(v := _r('cookie', 32, _HEX))}; HttpOnly; Path=/", v),
    (
        f"curl -H 'PRIVATE-TOKEN: {(v := 'glpat-' + _r('gl-header', 20, _URLSAFE))}' https://gitlab.example.com/api/v4/user",
        v,
    ),
    (f"X-Api-Key: {(v := _r('x-api-key', 40))}", v),
    # -- tokens of many vendors, standing alone --------------------------------------------------
    (f"grafana: {(v := 'glsa_' + _r('glsa', 32) + '_' + _r('glsa-c', 8, _HEX))}", v),
    (f"postman key {(v := 'PMAK-' + _r('pmak1', 24, _HEX) + '-' + _r('pmak2', 34, _HEX))}", v),
    (f"databricks {(v := 'dapi' + _r('dapi', 32, _HEX))}", v),
    (f"replicate {(v := 'r8_' + _r('r8', 37))}", v),
    (f"new relic {(v := 'NRAK-' + _r('nrak', 27, string.ascii_uppercase + string.digits))}", v),
    (f"supabase {(v := 'sbp_' + _r('sbp', 40, _HEX))}", v),
    (f"buildkite {(v := 'bkua_' + _r('bkua', 40, _HEX))}", v),
    (f"bitbucket {(v := 'ATBB' + _r('atbb', 32))}", v),
    (f"mapbox {(v := 'sk.eyJ1IjoiYW5uIiwiYSI6I' + _r('mapbox', 40, _URLSAFE))}", v),
    (f"notion {(v := 'ntn_' + _r('ntn', 46))}", v),
    (f"airtable {(v := 'pat' + _r('at1', 14) + '.' + _r('at2', 64, _HEX))}", v),
    (f"contentful {(v := 'CFPAT-' + _r('cfpat', 43, _URLSAFE))}", v),
    (
        f"dynatrace {(v := 'dt0c01.' + _r('dt1', 24, string.ascii_uppercase + string.digits) + '.' + _r('dt2', 64, string.ascii_uppercase + string.digits))}",
        v,
    ),
    (f"1password {(v := 'ops_eyJ' + _r('ops', 120, _URLSAFE))}", v),
    (f"alibaba {(v := 'LTAI' + _r('ltai', 20))}", v),
    (f"shippo {(v := 'shippo_live_' + _r('shippo', 40, _HEX))}", v),
    (f"mailchimp {(v := _r('mc', 32, _HEX) + '-us14')}", v),
    (
        f"discord bot {(v := 'MT' + _r('dc1', 24) + '.' + _r('dc2', 6, _URLSAFE) + '.' + _r('dc3', 38, _URLSAFE))}",
        v,
    ),
    (f"slack refresh {(v := 'xoxe.xoxp-1-' + _r('xoxe', 140))}", v),
    (f"heroku {(v := 'HRKU-AA' + _r('hrku', 58, _URLSAFE))}", v),
    (f"firebase refresh {(v := '1//0' + _r('g-refresh', 99, _URLSAFE))}", v),
    (f"openai {(v := 'sk-proj-' + _r('openai', 156, _URLSAFE))}", v),
    (f"anthropic {(v := 'sk-ant-api03-' + _r('anthropic', 93, _URLSAFE) + 'AA')}", v),
    (
        f"github {(v := 'github_pat_11' + _r('ghpat1', 20, string.ascii_uppercase + string.digits) + '_' + _r('ghpat2', 59))}",
        v,
    ),
    (f"stripe {(v := 'sk_live_' + _r('stripe', 99))}", v),
    (f"aws session {(v := 'FwoGZXIvYXdzE' + _r('aws-sts', 300, _B64))}", v),
    (f"jwt {_JWT}", _JWT),
    (
        "-----BEGIN EC PRIVATE KEY-----\n"
        + (v := _r("ec-key", 64, _B64))
        + "\n-----END EC PRIVATE KEY-----",
        v,
    ),
    (
        f"PuTTY-User-Key-File-3: ssh-ed25519\nPrivate-Lines: 1\n{(v := _r('putty', 44, _B64))}",
        v,
    ),
]

# Text that carries hashes, UUIDs, base64 and the words of secrets without holding one.
LOOKALIKES: list[str] = [
    # git's output
    f"commit {_r('c1', 40, _HEX)}\nAuthor: Ann <ann@example.com>",
    f"Merge: {_r('m1', 7, _HEX)} {_r('m2', 7, _HEX)}",
    f"diff --git a/app.py b/app.py\nindex {_r('i1', 7, _HEX)}..{_r('i2', 7, _HEX)} 100644",
    f"Change-Id: I{_r('gerrit', 40, _HEX)}",
    f"{_r('blame', 8, _HEX)} (Ann 2024-05-01 10:02:11 +0200 12) password = read_password()",
    f"   {_r('rb1', 7, _HEX)}..{_r('rb2', 7, _HEX)}  main -> origin/main",
    # lock files and checksums
    f'"integrity": "sha512-{_r("npm-int", 86, _B64)}=="',
    f"golang.org/x/text v0.14.0 h1:{_r('gosum', 43, _B64)}=",
    f'checksum = "{_r("cargo", 64, _HEX)}"',
    f"requests==2.32.3 --hash=sha256:{_r('pip-hash', 64, _HEX)}",
    f"{_r('sha256sum', 64, _HEX)}  dist/app-1.4.2.tar.gz",
    f'resolved "https://registry.yarnpkg.com/lodash/-/lodash-4.17.21.tgz#{_r("yarn", 40, _HEX)}"',
    f"Digest: sha256:{_r('docker-digest', 64, _HEX)}",
    f"CONTAINER ID   IMAGE\n{_r('container', 12, _HEX)}   postgres:16",
    # test runs that name secrets without holding one
    f"tests/test_api.py::test_create_user[{_r('u1', 8, _HEX)}-{_r('u2', 4, _HEX)}-4{_r('u3', 3, _HEX)}-a{_r('u4', 3, _HEX)}-{_r('u5', 12, _HEX)}] PASSED",
    "tests/test_auth.py::test_rejects_an_expired_token PASSED",
    "FAILED tests/test_auth.py::test_login[secret-key-missing] - AssertionError",
    "def test_password_hash_matches(user, password_hasher):",
    "E       KeyError: 'api_key'",
    "token = tokenizer.encode(text)",
    'password = request.form["password"]',
    "api_key = settings.API_KEY",
    "SECRET_KEY_FALLBACKS = []",
    "PASSWORD_HASHERS = ['django.contrib.auth.hashers.Argon2PasswordHasher']",
    '"token_type": "Bearer", "expires_in": 3600',
    # base64 and identifiers that are not credentials
    f"echo {base64.b64encode(b'hello from the build script').decode()} | base64 -d",
    f"Content-MD5: {base64.b64encode(random.Random('md5').randbytes(16)).decode()}",
    f"arn:aws:iam::{random.Random('acct').randint(10**11, 10**12 - 1)}:role/deploy",
    f"RequestId: {_r('req1', 8, _HEX)}-{_r('req2', 4, _HEX)}-{_r('req3', 4, _HEX)}-{_r('req4', 4, _HEX)}-{_r('req5', 12, _HEX)}",
    f"pod/web-{_r('pod1', 10, 'bcdfghjklmnpqrstvwxz2456789')}-{_r('pod2', 5, 'bcdfghjklmnpqrstvwxz2456789')}   1/1   Running",
    f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{_r('sshpub', 43, _B64)} ann@laptop",
    f"Key fingerprint = {' '.join(_r(f'fp{i}', 4, '0123456789ABCDEF') for i in range(10))}",
    f"Build ID: {_r('build', 40, _HEX)}",
    f"pk_live_{_r('pk', 24)}",
    "ssh://git@github.com/org/app.git",
    "git@github.com:org/app.git",
    "https://pypi.org/simple/requests/",
    "postgres://db.internal:5432/shop",
    '  File "/usr/lib/python3.12/secrets.py", line 34, in token_hex',
    "at com.example.auth.TokenService.refresh(TokenService.java:88)",
    "WARNING: The password you typed is too short (minimum 12 characters)",
    f'{{"id": "{_r("obj", 24, _HEX)}", "name": "ann"}}',
    "supercalifragilisticexpialidocious",
    "redis-cli -h cache -p 6379 ping",
    "mysql -h db -u root -p shop",
    "--password-stdin < /run/secrets/registry",
]

# Environment variables a command must not inherit: (name, value).
ENV_SECRETS: list[tuple[str, str]] = [
    (
        "FASTLANE_SESSION",
        "---\n- !ruby/object:HTTP::Cookie\n  name: myacinfo\n  value: DAWTKNV2"
        + _r("fastlane", 180)
        + '\n  domain: apple.com\n  for_domain: true\n  path: "/"\n',
    ),
    ("FASTLANE_PASSWORD", _pw("fastlane-pw")),
    ("MATCH_PASSWORD", _pw("match")),
    ("CONSUL_HTTP_TOKEN", _r("consul", 36, _HEX)),
    ("NOMAD_TOKEN", _r("nomad", 36, _HEX)),
    ("SENTRY_AUTH_TOKEN", "sntrys_" + _r("sentry", 60)),
    ("HOMEBREW_GITHUB_API_TOKEN", "ghp_" + _r("brew", 36)),
    ("DATABASE_URL", f"postgres://app:{_pw('dburl')}@db.internal:5432/shop"),
    ("REDIS_URL", f"redis://:{_pw('redisurl')}@cache.internal:6379/0"),
    ("CELERY_BROKER_URL", f"amqp://celery:{_pw('celery')}@rabbit:5672//"),
    ("PIP_EXTRA_INDEX_URL", f"https://__token__:{_r('pipx', 24)}@pkgs.example.com/simple"),
    ("HTTPS_PROXY", f"http://ann:{_pw('proxy')}@proxy.corp:3128"),
    ("SLACK_HOOK", f"https://hooks.slack.com/services/T{_r('t', 8)}/B{_r('b', 8)}/{_r('h', 24)}"),
    ("SONAR_LOGIN", "squ_" + _r("sonar", 40, _HEX)),
    ("RAILS_MASTER_KEY", _r("rails", 32, _HEX)),
    (
        "WALLET_MNEMONIC",
        "exile ripple tongue float ozone brave lucky cabin remind glare faith vapor",
    ),
    (
        "DEPLOY_SSH",
        "-----BEGIN OPENSSH PRIVATE KEY-----\n"
        + _r("deploy", 70, _B64)
        + "\n-----END OPENSSH PRIVATE KEY-----",
    ),
    ("NPM_RC", "//registry.npmjs.org/:_authToken=npm_" + _r("npmrc-env", 36)),
    ("STRIPE_LIVE", "sk_live_" + _r("stripe-env", 99)),
    ("FIREBASE_TOKEN", "1//0" + _r("firebase", 99, _URLSAFE)),
    ("AUTH0_CLIENT_SECRET", _r("auth0", 64, _URLSAFE)),
    ("ENCRYPTION_PASSPHRASE", "correct horse battery staple"),
    ("SESSION_COOKIE", _r("session-cookie", 64, _HEX)),
    ("GRAFANA_SA", "glsa_" + _r("glsa-env", 32) + "_" + _r("glsa-env-c", 8, _HEX)),
    (
        "KUBE_CONFIG_DATA",
        base64.b64encode(f"users:\n- user:\n    token: {_r('kube', 40)}\n".encode()).decode(),
    ),
]

# Environment variables a command needs, whatever their names or values look like.
ENV_ORDINARY: list[tuple[str, str]] = [
    ("PATH", "/home/ann/.local/bin:/usr/local/bin:/usr/bin:/bin"),
    ("HOME", "/home/ann"),
    ("LANG", "en_US.UTF-8"),
    ("SHELL", "/bin/bash"),
    ("EDITOR", "vim"),
    (
        "LS_COLORS",
        "rs=0:di=01;34:ln=01;36:mh=00:pi=40;33:so=01;35:do=01;35:bd=40;33;01:*.tar=01;31",
    ),
    ("SSH_AUTH_SOCK", "/run/user/1000/keyring/ssh"),
    ("DBUS_SESSION_BUS_ADDRESS", f"unix:path=/run/user/1000/bus,guid={_r('dbus', 32, _HEX)}"),
    ("XDG_SESSION_ID", "3"),
    ("XDG_SESSION_TYPE", "wayland"),
    ("DESKTOP_SESSION", "gnome"),
    ("SESSION_MANAGER", "local/laptop:@/tmp/.ICE-unix/2211,unix/laptop:/tmp/.ICE-unix/2211"),
    ("GITHUB_SHA", _r("gh-sha", 40, _HEX)),
    ("CI_COMMIT_SHA", _r("ci-sha", 40, _HEX)),
    ("INVOCATION_ID", _r("invocation", 32, _HEX)),
    (
        "TERM_SESSION_ID",
        f"w0t0p0:{_r('ts1', 8, _HEX).upper()}-{_r('ts2', 4, _HEX).upper()}-4{_r('ts3', 3, _HEX).upper()}-8{_r('ts4', 3, _HEX).upper()}-{_r('ts5', 12, _HEX).upper()}",
    ),
    ("VIRTUAL_ENV", "/home/ann/src/app/.venv"),
    ("NODE_OPTIONS", "--max-old-space-size=4096"),
    ("KUBECONFIG", "/home/ann/.kube/config"),
    ("PIP_INDEX_URL", "https://pypi.org/simple"),
    ("HTTP_PROXY", "http://proxy.corp:3128"),
    ("GITHUB_RUN_ID", "9876543210"),
    ("GITHUB_REPOSITORY", "org/app"),
    ("VSCODE_GIT_IPC_HANDLE", f"/run/user/1000/vscode-git-{_r('vscode', 10, _HEX)}.sock"),
    ("TOKENIZERS_PARALLELISM", "false"),
    ("GPG_TTY", "/dev/pts/3"),
    ("GOPATH", "/home/ann/go"),
    ("GIT_AUTHOR_EMAIL", "ann@example.com"),
    ("PYTEST_ADDOPTS", "-p no:cacheprovider"),
]

# Written after the table and the detector were tuned on the sets above, and measured once
# before any change for them (the figures are in docs/security.md): how the two do on forms
# neither was written for.
HELD_OUT_SECRETS: list[tuple[str, str]] = [
    (f"psql 'host=db user=app password={(p := _pw('libpq'))} dbname=shop'", p),
    (f"export TF_VAR_db_password='{(p := _pw('tfvar'))}'", p),
    (f"curl -d 'client_id=app&client_secret={(v := _r('cs-form', 32))}' https://idp/token", v),
    (f"git config --global github.token {(v := 'ghp_' + _r('gitcfg', 36))}", v),
    (f"  auth_token: {(v := _r('yaml-auth', 40, _URLSAFE))}", v),
    (f"ENV API_SECRET={(v := _r('dockerfile', 32))}", v),
    (f'{{"credentials": {{"apiKey": "{(v := _r("json-nested", 40))}"}}}}', v),
    (f"wget --user=ann --password={(p := _pw('wget'))} https://files/x", p),
    (f"mosquitto_pub -h mqtt -u sensor -P {(p := _pw('mqtt'))} -t t -m 1", p),
    (f"ftp://deploy:{(p := _pw('ftpurl'))}@ftp.example.com/upload", p),
    (f"smtp://mailer:{(p := _pw('smtpurl'))}@smtp.example.com:587", p),
    (
        f"Proxy-Authorization: Basic {(v := base64.b64encode(('ann:' + _pw('proxyauth')).encode()).decode())}",
        v,
    ),
    (f"X-Vault-Token: {(v := 'hvs.' + _r('vault-h', 90, _URLSAFE))}", v),
    (f"twilio auth_token={(v := _r('twilio-at', 32, _HEX))}", v),
    (f"export DIGITALOCEAN_TOKEN={(v := 'dop_v1_' + _r('do-h', 64, _HEX))}", v),
    (f"heroku config:set STRIPE_KEY={(v := 'sk_live_' + _r('heroku-stripe', 24))}", v),
    (f"cloudflare token {(v := _r('cf-token', 40, _URLSAFE))} for zone edits", v),
    (f"gcloud auth activate-refresh-token {(v := '1//0' + _r('gcloud-rt', 90, _URLSAFE))}", v),
    (f"JWT_SIGNING_KEY: {(v := _r('jwt-key', 48, _B64))}", v),
    (f"redis-cli -a {(p := _pw('redis-a'))} -h cache ping", p),
]
HELD_OUT_LOOKALIKES: list[str] = [
    f'poetry.lock: files = [{{file = "pkg-1.0.tar.gz", hash = "sha256:{_r("poetry", 64, _HEX)}"}}]',
    f"npm WARN deprecated inflight@1.0.6 sha512-{_r('npm-warn', 86, _B64)}==",
    f"Successfully built {_r('docker-built', 12, _HEX)}",
    f"[main {_r('commit-short', 7, _HEX)}] Fix token refresh when the password changes",
    "AssertionError: expected status 401 for an invalid token, got 200",
    f"uuid: {_r('v1', 8, _HEX)}-{_r('v2', 4, _HEX)}-4{_r('v3', 3, _HEX)}-9{_r('v4', 3, _HEX)}-{_r('v5', 12, _HEX)}",
    "password_reset_timeout_days = 3",
    "mypy: error: Name 'secret_key' is not defined  [name-defined]",
    f"X-Request-Id: {_r('xreq', 32, _HEX)}",
    f'etag: W/"{_r("etag", 27, _URLSAFE)}"',
    "def make_token(length: int = 32) -> str: return secrets.token_urlsafe(length)",
    "ok  \tgithub.com/org/app/auth\t0.412s\tcoverage: 81.2% of statements",
    "ssh-keygen -t ed25519 -C ann@laptop -f ~/.ssh/id_ed25519",
    "docker run -p 8080:80 -u 1000 nginx:1.27",
    "pip install -U pip -p 3.12",
]

# Tokens of vendors no table row names (the prefixes are made up): what only a detector
# that reads randomness can find.
UNNAMED_TOKENS: list[tuple[str, str]] = [
    (f"curl -H 'X-Acme-Key: {(v := 'acme_live_' + _r('acme', 32))}' https://api.acme.test", v),
    (f"export WIDGETS={(v := 'wdg_' + _r('wdg', 40, _URLSAFE))}", v),
    (f"the service token is {(v := _r('bare-token', 32))} (rotate monthly)", v),
    (f"deploy --auth {(v := 'zt1.' + _r('zt1', 48, _URLSAFE))}", v),
    (f'client = Api("{(v := _r("quoted", 40))}")', v),
    (f'{{"credentials": "{(v := _r("json-cred", 64, _B64))}"}}', v),
    (f"ACCESS={(v := 'AX' + _r('ax', 38))}", v),
    (f"https://hooks.example.test/in/{(v := _r('hook-path', 32))}", v),
    (f"login with {(v := 'pat_' + _r('pat-x', 30) + '_' + _r('pat-y', 12))}", v),
    (f"tok:{(v := _r('colon-tok', 28, _URLSAFE))}", v),
]
