"""caretz inside other harnesses: `harbor.py` is Harbor's installed agent
(`caretz.integrations.harbor:CaretzAgent`), `harbor_report.py` what it reads from a
headless run. Nothing in caretz imports this package: a harness loads it by its path."""
