"""Session tokens for the web application."""
import hashlib
import hmac
import secrets
import time

TOKEN_TTL_SECONDS = 3600


def issue_token(user_id: str, key: bytes) -> str:
    """Issue a signed token that expires after an hour."""
    expires = int(time.time()) + TOKEN_TTL_SECONDS
    nonce = secrets.token_hex(8)
    payload = f"{user_id}:{expires}:{nonce}"
    sig = hmac.new(key, payload.encode(), hashlib.sha256).hexdigest()
    return f"{payload}:{sig}"


def verify_token(token: str, key: bytes) -> str | None:
    """Check the signature and the expiry; return the user id or None."""
    try:
        user_id, expires, nonce, sig = token.split(":")
    except ValueError:
        return None
    payload = f"{user_id}:{expires}:{nonce}"
    want = hmac.new(key, payload.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(want, sig):
        return None
    if int(expires) < time.time():
        return None
    return user_id


def hash_password(password: str, salt: bytes) -> str:
    """Derive a password hash with PBKDF2 for storage."""
    return hashlib.pbkdf2_hmac("sha256", password.encode(), salt, 600_000).hex()
