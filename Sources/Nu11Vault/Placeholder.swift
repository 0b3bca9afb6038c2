public enum Placeholder3 {}
