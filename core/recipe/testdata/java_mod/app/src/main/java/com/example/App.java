package com.example;

public class App {
    public static void main(final String[] args) { System.out.println("app"); }
}
