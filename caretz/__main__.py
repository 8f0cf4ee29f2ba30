from caretz.cli import main

main()
