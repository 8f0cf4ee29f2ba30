"""The application layer: `caretz.app.session.Session`, which every front end drives."""
