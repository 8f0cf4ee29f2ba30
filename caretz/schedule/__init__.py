"""Scheduled runs that outlive the session: headless caretz runs installed in the user's crontab."""
