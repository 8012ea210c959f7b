"""What several test modules share: test data, trees and ways to run buildport."""
