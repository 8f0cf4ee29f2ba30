"""The application layer: `caretz.app.session.AppSession`, which every front end drives."""
