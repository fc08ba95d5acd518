from tracecli.cli.start import main

main()
