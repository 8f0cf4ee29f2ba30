"""Secret shapes and look-alikes: what redaction must hide and what it must leave alone.

Each secret case is (text, the secret in it). The values are made up, shaped like the
real thing (prefixes, lengths, alphabets), so that no real credential is ever stored.
"""

from __future__ import annotations

_B64 = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
_HEX32 = "0123456789abcdef0123456789abcdef"
_JWT = (
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
)
_PEM_BODY = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun"

SECRETS: list[tuple[str, str]] = [
    # assignments to names that say "secret"
    ("DJANGO_SECRET_KEY=django-insecure-9xk2l4m5n6p7q8", "django-insecure-9xk2l4m5n6p7q8"),
    ("DB_PASS=hunter2", "hunter2"),
    ("SECRET_KEY_BASE=3b1f0c9e8d7a6b5c4d3e2f1a0b9c8d7e", "3b1f0c9e8d7a6b5c4d3e2f1a0b9c8d7e"),
    ("export GITHUB_TOKEN=abc123plain", "abc123plain"),
    ("DB_PASSWORD: hunter2", "hunter2"),
    ('api_key="pa55word!"', "pa55word!"),
    ('{"apiKey": "s3cr3t-value"}', "s3cr3t-value"),
    ("MY_APP_PASSWD=Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("SMTP_PWD='correct horse battery'", "correct horse battery"),
    ("ENCRYPTION_KEY=Zm9vYmFyYmF6cXV4cXV1eA", "Zm9vYmFyYmF6cXV4cXV1eA"),
    ("STRIPE_KEY = 'x9Y8z7W6v5U4t3S2'", "x9Y8z7W6v5U4t3S2"),
    ("spring.datasource.password=Sup3rS3cret", "Sup3rS3cret"),
    ("AWS_SESSION_TOKEN=FwoGZXIvYXdzEJr//////////wEaDNe8", "FwoGZXIvYXdzEJr//////////wEaDNe8"),
    (f"aws_secret_access_key = {_B64}", _B64),
    ("passphrase: open sesame please", "open sesame"),
    ("client_secret=8Q~abcDEFghiJKLmnoPQRstuVWXyz0123", "8Q~abcDEFghiJKLmnoPQRstuVWXyz0123"),
    ("Ocp-Apim-Subscription-Key: " + _HEX32, _HEX32),
    ("x-api-key: k-7f3a9b2c1d4e5f60", "k-7f3a9b2c1d4e5f60"),
    ("//registry.npmjs.org/:_authToken=npm-0a1b2c3d-4e5f", "npm-0a1b2c3d-4e5f"),
    # provider key prefixes
    ("key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz012345", "sk-ant-api03-AbCdEfGhIjKlMnOpQrSt"),
    ("sk-proj-AbCdEfGhIjKlMnOpQrStUvWx", "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx"),
    ("openai sk-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdEFGH", "sk-AbCdEfGhIjKlMnOpQrStUvWx"),
    ("stripe sk_live_51HxAbCdEfGhIjKlMnOpQrSt", "sk_live_51HxAbCdEfGhIjKlMnOpQrSt"),
    ("restricted rk_live_51HxAbCdEfGhIjKlMnOpQrSt", "rk_live_51HxAbCdEfGhIjKlMnOpQrSt"),
    ("webhook whsec_AbCdEfGhIjKlMnOpQrStUvWxYz012345", "whsec_AbCdEfGhIjKlMnOpQrStUvWxYz012345"),
    ("ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
    ("gho_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "gho_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv", "github_pat_11ABCDEFG01234"),
    ("glpat-AbCdEfGhIjKlMnOpQrSt", "glpat-AbCdEfGhIjKlMnOpQrSt"),
    ("xoxb-123456789012-abcdefghijkl", "xoxb-123456789012-abcdefghijkl"),
    ("xoxp-123456789012-123456789012-abcdef", "xoxp-123456789012-123456789012"),
    ("AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("maps AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
    ("hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567"),
    ("npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
    ("SG.AbCdEfGhIjKlMnOpQrStUv.WxYz0123456789AbCdEfGhIjKlMnOpQrStUvWxYz012", "SG.AbCdEfGhIjKl"),
    ("twilio SK" + _HEX32, "SK" + _HEX32),
    ("mailgun key-" + _HEX32, "key-" + _HEX32),
    ("shpat_" + _HEX32, "shpat_" + _HEX32),
    ("pypi-AgEIcHlwaS5vcmcCJGE4YjFjMjNkLTQ1ZTYtNzg5MC1hYmNkLWVmMDEyMzQ1Njc4OQ", "pypi-AgEIcHlwaS5"),
    ("dop_v1_" + _HEX32 + _HEX32, "dop_v1_" + _HEX32),
    ("bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw9", "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw9"),
    # URLs that carry credentials
    (
        "https://hooks.slack.com/services/T0ABC1234/B0DEF5678/AbCdEfGhIjKlMnOpQrStUvWx",
        "AbCdEfGhIjKlMnOp",
    ),
    (
        "https://discord.com/api/webhooks/123456789012345678/AbCdEf-GhIjKlMnOpQrStUvWxYz0123",
        "AbCdEf-GhIj",
    ),
    ("SENTRY_DSN=https://" + _HEX32 + "@o123456.ingest.sentry.io/789", _HEX32),
    ("dsn https://" + _HEX32 + "@o1.ingest.us.sentry.io/2", _HEX32),
    ("postgres://admin:letmein@db.internal/app", "letmein"),
    ("redis://:p4ssw0rd@cache:6379/0", "p4ssw0rd"),
    (
        "git clone https://oauth2:glpat-xyz1234567890abcd@gitlab.com/a/b.git",
        "glpat-xyz1234567890abcd",
    ),
    (
        "https://storage.blob.core.windows.net/c?sv=2022-11-02&sp=r&sig=AbC%2BdEf%2Fgh1234567890xyZ%3D",
        "AbC%2BdEf",
    ),
    # passwords on command lines
    ("mysql -u root -phunter2 shop", "hunter2"),
    ("mysqldump --user=root --password=hunter2 shop", "hunter2"),
    ("psql --password hunter2", "hunter2"),
    ("docker login -u ann -p s3cretpass registry.example.com", "s3cretpass"),
    ("sshpass -p 'hunter2' ssh deploy@host", "hunter2"),
    ("curl -u admin:hunter2 https://api.example.com", "hunter2"),
    ("gh auth login --with-token --token ghs_x1y2z3a4b5c6d7e8f9", "ghs_x1y2z3a4b5c6d7e8f9"),
    # headers, tokens, keys
    ("Authorization: Bearer abc.def.ghi-jkl", "abc.def"),
    ("curl -H 'Authorization: token deadbeefcafe'", "deadbeefcafe"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
    (f"jwt {_JWT}", _JWT),
    (f"-----BEGIN RSA PRIVATE KEY-----\n{_PEM_BODY}\n-----END RSA PRIVATE KEY-----", _PEM_BODY),
    (f"-----BEGIN OPENSSH PRIVATE KEY-----\n{_PEM_BODY}\n", _PEM_BODY),
    (f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{_PEM_BODY}\n", _PEM_BODY),
    # cloud keys and connection strings
    (
        "DefaultEndpointsProtocol=https;AccountName=shop;AccountKey=" + _B64 + "==;"
        "EndpointSuffix=core.windows.net",
        _B64,
    ),
    (
        "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=" + _B64,
        _B64,
    ),  # fmt: skip
    ('"private_key_id": "' + _HEX32 + '1a2b3c4d",', _HEX32),
    (
        '"private_key": "-----BEGIN PRIVATE KEY-----\\n'
        + _PEM_BODY
        + '\\n-----END PRIVATE KEY-----\\n"',
        _PEM_BODY,
    ),  # fmt: skip
]

LOOKALIKES: list[str] = [
    "commit 3f2a1b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a",
    "HEAD is now at a1b2c3d fix the parser",
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "python@sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "sha1: da39a3ee5e6b4b0d3255bfef95601890afd80709",
    "MD5 (file) = d41d8cd98f00b204e9800998ecf8427e",
    "request 123e4567-e89b-12d3-a456-426614174000 failed",
    "test_secret_key_rotation PASSED",
    "test_secret_rotation PASSED",
    "def test_password_reset_token_expires():",
    "max_tokens=1024",
    "token_count=5",
    "TOKEN_URL=https://oauth2.googleapis.com/token",
    "PASSWORD_FILE=/run/secrets/db_password",
    "tokenize.TokenError: ('EOF in multi-line statement', (3, 0))",
    "PasswordField(required=True)",
    "KeyError: 'secret'",
    "passwords.txt not found",
    "def get_api_key(self) -> str:",
    'api_key = os.environ["API_KEY"]',
    "password = getpass.getpass()",
    "self.token = token",
    "secret = None",
    '"password": null,',
    '"password": {"type": "string", "minLength": 8}',
    "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
    "export API_KEY=$API_KEY",
    "api_key: <YOUR_API_KEY>",
    "if password == confirm:",
    "cache_key = 'user:42'",
    "sort_key=name",
    "PUBLIC_KEY_PATH=keys/id.pub",
    "/home/ann/.ssh/known_hosts",
    "src/secrets/manager.py:12: unused import",
    "version v1.2.3-rc.1+build.5",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
    "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 ann@laptop",
    "-----BEGIN PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----",
    "https://ann@github.com/org/repo.git",
    "mysql -h localhost -P 3306 -u root -p shop",
    "ls -la --color=auto",
    "npm install --save-dev typescript",
    'grep -rn "password" src/',
    "pip install scikit-learn sk-video",
    "xoxo from the team",
    "ghp_abc is too short to be a token",
    "Bearer token required",
    "Token count: 1,024 tokens used",
    "Content-Length: 1234",
    "fe80::1ff:fe23:4567:890a",
    "std::string password_hint;",
    "AccountName=devstoreaccount1",
    "TOKENIZERS_PARALLELISM=false",
    "password_min_length=12",
]
